"""`quizapp serve`: the app in a browser tab, over textual-serve, with what a server needs around it."""
