from quizapp.cli import main

main()
