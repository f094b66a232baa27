"""DGL's own ways of writing a distributed script, run on Tessera with only the imports changed: the user guide's
hand-written sampler (sample_neighbors + to_block + DistDataLoader(collate_fn)) and the unsupervised GraphSAGE
examples (edge batches, negatives, u_dot_v, layer-wise inference, logistic regression)."""
import os
import statistics
import sys

from conftest import final_metrics, launch, python_env, run

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")


def launched(directory, part, script, flags):
    r, _ = launch(directory, part, f"python3 {SCRIPTS}/{script} {flags}")
    assert r.returncode == 0, r.stdout + r.stderr
    m = final_metrics(r.stdout)
    assert m is not None, r.stdout
    return m


def test_the_guides_sampler_code_trains_cora_on_two_machines(cora_dgl_names, tmp_path):
    part = str(cora_dgl_names / "p2" / "cora.json")
    # Five seeds: a seed now and then lands near 0.73 (2 of 96 seen, both after the narrow GEMMs changed the
    # rounding, 0 of 39 before; the other 94 span 0.769-0.815), which pulled a three-seed mean under the bar in 2
    # of 32 runs. The bar on the mean stays where it was.
    accs = [launched(str(tmp_path), part, "guide_sage.py", f"--part-config {part} --seed {s}")["test_acc"]
            for s in range(5)]
    print(f"guide's GraphSAGE (sample_neighbors + to_block), Cora, 2 machines: {accs}, mean "
          f"{statistics.mean(accs):.4f}")
    assert statistics.mean(accs) >= 0.77


def test_unsupervised_graphsage_embeddings_beat_raw_features(cora_dgl_names, tmp_path):
    part = str(cora_dgl_names / "p2" / "cora.json")
    flags = f"--part_config {part} --num_epochs 5 --num_hidden 64 --batch_size 256"
    m = launched(str(tmp_path), part, "unsupervised_sage.py", flags)
    print(f"unsupervised GraphSAGE, Cora, 2 machines: {m}")
    assert m["test_acc"] >= 0.54  # logistic regression on the raw features: 0.479


def test_unsupervised_transductive_runs_with_both_embeddings(cora_dgl_names, tmp_path):
    part = str(cora_dgl_names / "p2" / "cora.json")
    flags = f"--part_config {part} --num_epochs 5 --num_hidden 64 --batch_size 256 --transductive"
    m = launched(str(tmp_path), part, "unsupervised_sage.py", flags + " --dgl_sparse")
    print(f"unsupervised transductive GraphSAGE (DistEmbedding + SparseAdam), Cora, 2 machines: {m}")
    assert 0 <= m["test_acc"] <= 1
    standalone = str(cora_dgl_names / "p1" / "cora.json")
    r = run([sys.executable, f"{SCRIPTS}/unsupervised_sage.py", "--part_config", standalone, "--standalone",
             "--transductive", "--num_epochs", "20"], env=python_env(), cwd=str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    m = final_metrics(r.stdout)
    print(f"unsupervised transductive GraphSAGE (torch sparse Embedding), standalone, 20 epochs: {m}")
    assert m["test_acc"] >= 0.30  # it learns: 5 epochs give about 0.22
