import sys

from quizapp.bench.main import main

sys.exit(main())
