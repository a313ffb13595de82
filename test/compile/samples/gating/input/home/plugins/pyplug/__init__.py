def register(ctx): pass
