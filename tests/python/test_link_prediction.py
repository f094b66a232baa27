"""Link prediction end to end: `tessera partition --valid-edges / --test-edges` holds node pairs out of the graph,
`tessera train link` learns from its neighbourhoods what features alone do not give, and the Python example
(the same model on DistEdgeDataLoader) ranks as well. Real servers and trainers on loopback."""
import json

import numpy as np
import pytest

from conftest import EXAMPLES, TESSERA, final_metrics, launch, run, shared, tessera

CORA_LINK = "--decoder mlp --dropout 0.5 --num-epochs 10 --batch-size 256 --num-hidden 64"


def test_held_out_edges_leave_the_graph_both_ways(cora_links):
    config = cora_links / "p2" / "cora.json"
    meta = json.loads(config.read_text())
    pairs = np.concatenate([np.load(cora_links / "p2" / meta["held_out_edges"][s]) for s in ("valid", "test")])
    assert len(pairs) == int(0.05 * 5278) + int(0.1 * 5278)  # Cora: 5,278 connected pairs, 10,556 edges
    assert meta["num_edges"] == 10556 - 2 * len(pairs)
    # Every stored edge, in the partition's IDs: the held-out pairs are in neither direction.
    edges = set()
    for p in range(2):
        part = meta[f"part-{p}"]
        g = cora_links / "p2" / part["part_graph"]
        indptr, indices = np.load(g / "indptr.npy"), np.load(g / "indices.npy")
        first = meta["node_map"]["_N"][p][0]
        dst = np.repeat(np.arange(len(indptr) - 1) + first, np.diff(indptr))
        edges.update(zip(indices.tolist(), dst.tolist()))
    assert len(edges) == meta["num_edges"]
    for u, v in pairs.tolist():
        assert (u, v) not in edges and (v, u) not in edges


def test_too_many_held_out_edges_is_a_clear_error(tmp_path):
    r = run([TESSERA, "partition", "--input", shared("node/cora"), "--num-parts", "1", "--test-edges", "6000",
             "--out", str(tmp_path / "p")])
    assert r.returncode != 0
    assert "tessera: error:" in r.stderr and "--test-edges" in r.stderr, r.stderr
    assert not (tmp_path / "p").exists()


def link_job(directory, part, flags):
    r, _ = launch(str(directory), part, f"{TESSERA} train link --part-config {part} {flags} --out {directory}/run")
    assert r.returncode == 0, r.stdout + r.stderr
    return final_metrics(r.stdout)


def test_neighbourhoods_beat_features_and_python_matches_native(cora_links, tmp_path):
    part = str(cora_links / "p2" / "cora.json")
    native = link_job(tmp_path, part, CORA_LINK + " --logistic-regression")
    features_only = link_job(tmp_path, part, CORA_LINK + " --fanout 0 --eval-fanout 0")
    r, _ = launch(str(tmp_path), part, f"python3 {EXAMPLES}/link_prediction.py --graph-name cora "
                                       f"--ip-config ip_config.txt --part-config {part} {CORA_LINK}")
    assert r.returncode == 0, r.stdout + r.stderr
    python = final_metrics(r.stdout)
    print(f"Cora link prediction, 2 machines: tessera train link MRR {native['test_mrr']:.4f}, fan-out 0 "
          f"{features_only['test_mrr']:.4f}, Python example {python['test_mrr']:.4f}, logistic regression on "
          f"the embeddings {native['embedding_test_acc']:.4f}")
    assert native["test_mrr"] >= features_only["test_mrr"] + 0.10
    assert abs(python["test_mrr"] - native["test_mrr"]) <= 0.02
    assert 0 < native["test_hits@1"] <= native["test_hits@10"] <= native["test_hits@50"] <= 1
    # Each trainer kept the other machine's hottest feature rows and found some of its remote rows there.
    assert native["feature_cache_rows"] > 0 and native["feature_cache_remote_hit_rate"] > 0, native
    # DGL's protocol: a logistic regression on the embeddings beats one on Cora's raw features (0.479).
    assert native["embedding_test_acc"] >= 0.54, native
    # The run is a run like the others: its records draw a report.
    page = tmp_path / "report.html"
    tessera("report", str(tmp_path / "run"), "-o", str(page))
    assert "test_mrr" in page.read_text()


def test_resume_continues_after_the_last_checkpoint(cora_links, tmp_path):
    part = str(cora_links / "p1" / "cora.json")
    base = [TESSERA, "train", "link", "--standalone", "--part-config", part, "--batch-size", "512", "--out",
            str(tmp_path / "run")]
    first = run(base + ["--num-epochs", "2"])
    assert first.returncode == 0, first.stderr
    # Two epochs write one checkpoint, after the first (epochs count from 0; none after the last).
    assert (tmp_path / "run" / "checkpoints" / "trainer-0" / "epoch-1").is_dir()
    again = run(base + ["--num-epochs", "3", "--resume"])
    assert again.returncode == 0, again.stderr
    assert "resuming after epoch 0 from" in again.stdout + again.stderr
    assert final_metrics(again.stdout)["epochs"] == 2


@pytest.mark.parametrize("flags, words", [
    ("--decoder cosine", ["--decoder", "cosine"]),
    ("--num-negs 0", ["--num-negs"]),
    ("--eval-negatives 0", ["--eval-negatives"]),
    ("--exclude both", ["--exclude", "both"]),
    ("--cache-remote-features 1.5", ["--cache-remote-features", "1.5"]),
    ("--feature-cache-mb -1", ["--feature-cache-mb"]),
])
def test_bad_flags_are_refused_up_front(cora_links, tmp_path, flags, words):
    r = run([TESSERA, "train", "link", "--standalone", "--part-config", str(cora_links / "p1" / "cora.json"),
             *flags.split(), "--out", str(tmp_path / "run")])
    assert r.returncode != 0
    assert "tessera: error:" in r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def test_a_partition_without_held_out_edges_says_how_to_make_them(small_graph, tmp_path):
    r = run([TESSERA, "train", "link", "--standalone", "--part-config", str(small_graph / "p1" / "small.json"),
             "--out", str(tmp_path / "run")])
    assert r.returncode != 0
    assert "--test-edges" in r.stderr, r.stderr
