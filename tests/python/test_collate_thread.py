"""DistDataLoader's collate thread: batches arrive in order and complete, an error in collate_fn reaches the loop
as itself, and leaving the loop early stops the thread. Plain Python data: no servers needed."""
import threading

import pytest
import torch

from tessera.dataloading import DistDataLoader


def test_batches_arrive_in_order_with_every_item_once():
    torch.manual_seed(0)
    loader = DistDataLoader(list(range(103)), batch_size=10, shuffle=True, collate_fn=lambda items: list(items))
    batches = list(loader)
    assert len(batches) == len(loader) == 11
    assert sorted(i for b in batches for i in b) == list(range(103))
    torch.manual_seed(0)
    assert list(DistDataLoader(list(range(103)), batch_size=10, shuffle=True, collate_fn=list,
                               queue_size=0)) == batches, "the order is torch's, thread or not"


def test_an_error_in_collate_fn_is_raised_in_the_loop():
    def collate(items):
        if 30 in items:
            raise KeyError("item 30")
        return items

    seen = []
    with pytest.raises(KeyError, match="item 30"):
        for batch in DistDataLoader(list(range(50)), batch_size=10, collate_fn=collate):
            seen.append(batch)
    assert len(seen) == 3


def test_leaving_early_frees_the_thread_for_the_next_loop():
    produced = []

    def collate(items):
        produced.append(items)
        return items

    for _ in range(3):
        for i, _ in enumerate(DistDataLoader(list(range(1000)), batch_size=1, collate_fn=collate, queue_size=2)):
            if i == 3:
                break
    # The producer stopped within the queue's depth of the break, and the loops shared one thread.
    assert len(produced) <= 3 * (4 + 2 + 1)
    assert sum(t.name.startswith("tessera-collate") for t in threading.enumerate()) == 1
