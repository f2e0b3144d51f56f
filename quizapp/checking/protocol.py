"""What the grader's parent and its child agree on about the result channel (the child's stdin, a
socket): the parent writes HELLO and then a fresh key of KEY_BYTES; the child signs every event with
it. Its own module so that the parent side never imports the child's (which loads torch)."""

HELLO = b"quizapp-grade-channel-1\n"
KEY_BYTES = 32
