"""The canonical model (IR): pure data shared by every dialect and provider.

Nothing here imports anything else from switchgate except `errors`.
"""
