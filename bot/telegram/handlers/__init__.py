"""Handlers by feature: play (rounds), info (balances, history, rules, help), verify,
admin. Each is a class over the collaborators it needs (``ShellParts``)."""
