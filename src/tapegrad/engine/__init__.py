"""Floor 1 of tapegrad: the thread-local tape mask, graph nodes and the one backward function.

Nothing here knows about particular ops or layers.
"""
