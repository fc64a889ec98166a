"""`domino serve`: play and watch the games in a browser (app.py: a Starlette app; templates and
static files are package data)."""
