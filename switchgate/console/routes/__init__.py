"""Server-rendered console routes (sign-in forms, OAuth redirects)."""
