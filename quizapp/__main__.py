from quizapp.main import main

main()
