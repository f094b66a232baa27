"""The node and edge types of a graph built over a partition book, by DGL's names."""


class TypesOfBook:
    """The node and edge types of something built over a partition book (``self._book``): DGL's
    ntypes / etypes / canonical_etypes and the type-ID lookups, shared by DistGraph and HeteroBlock."""

    @property
    def ntypes(self):
        return self._book.ntypes

    @property
    def etypes(self):
        return self._book.etypes

    @property
    def canonical_etypes(self):
        return self._book.canonical_etypes

    def to_canonical_etype(self, etype):
        return self._book.canonical_etypes[self._book._etype_id(etype)]

    def get_ntype_id(self, ntype):
        return self._book._ntype_id(ntype)

    def get_etype_id(self, etype):
        return self._book._etype_id(etype)
