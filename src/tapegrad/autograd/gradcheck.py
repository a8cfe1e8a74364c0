def gradcheck(*a, **k):
    raise NotImplementedError


gradgradcheck = gradcheck
