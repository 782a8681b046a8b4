"""The shipped model catalogue: well-known models with prices, limits and capabilities.

A dated data file inside the package (`models.json`); nothing is fetched at run time.
`switchgate catalogue list|show|import` and the console's catalogue page read it.
"""
