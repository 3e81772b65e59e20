"""Bridge to Label Studio: push pairs as tasks, pull annotations back as labels.

config.py (the labeling config and its contract), client.py (SDK calls with clear errors),
push.py, pull.py. The command is ``mmrb labelstudio push|pull`` (annotate/commands).
"""
