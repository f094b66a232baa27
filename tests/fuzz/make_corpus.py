#!/usr/bin/env python3
"""Writes the seed corpora under tests/fuzz/corpus/<target>/: small valid and
near-valid inputs for each fuzz target (see each *_fuzz.cc for its input
layout). Run it again after changing a layout; scripts/fuzz only reads them."""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
SEP = b"\n%%\n"


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- message: payload count, u16 header length, header, (u32 length, frame)*
def header(type_, ndim=0, shape=(0, 0, 0, 0), dtype=1, num_frames=0, name=b"", status=0, magic=0x41525354,
           version=1, iarg=0):
    h = struct.pack("<IHHQiBBH4qq4d", magic, version, type_, 7, status, dtype, ndim, num_frames, *shape, iarg,
                    0.1, 1e-8, 0.9, 0.999)
    h += name.ljust(128, b"\0")
    return h.ljust(256, b"\0")


def message(h, frames):
    out = bytes([len(frames)]) + struct.pack("<H", len(h)) + h
    for f in frames:
        out += struct.pack("<I", len(f)) + f
    return out


ids = struct.pack("<3q", 0, 5, 2)
put("message", "pull", message(header(2, 1, (3, 0, 0, 0), num_frames=1, name=b"node:feat"), [ids]))
put("message", "push", message(header(3, 2, (3, 2, 0, 0), dtype=2, num_frames=2, name=b"emb"),
                               [ids, struct.pack("<6f", *range(6))]))
spec = b'{"name":"emb","dtype":"float32","row_shape":[4],"policy":"node","persistent":false,' \
       b'"init":"uniform","init_a":-0.1,"init_b":0.1,"seed":42}'
put("message", "create", message(header(5, num_frames=1), [spec]))
put("message", "reply_error", message(header(1, status=1, num_frames=1), [b"server 0: no such tensor"]))
put("message", "shutdown", message(header(9), []))
put("message", "bad_magic", message(header(9, magic=0x12345678), []))
put("message", "short_header", message(header(2)[:100], []))
put("message", "frame_count_mismatch", message(header(2, 1, (3, 0, 0, 0), num_frames=2), [ids]))


# ---- npy: the whole file
def npy(descr, shape, data, version=1, fortran="False"):
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    prefix = 10 if version == 1 else 12
    d += " " * ((64 - (prefix + len(d) + 1) % 64) % 64) + "\n"
    head = b"\x93NUMPY" + bytes([version, 0])
    head += struct.pack("<H" if version == 1 else "<I", len(d))
    return head + d.encode() + data


put("npy", "int64_v1", npy("<i8", [3], struct.pack("<3q", 10, 20, 30)))
put("npy", "float32_v2", npy("<f4", [2, 2], struct.pack("<4f", 1, 2, 3, 4), version=2))
put("npy", "bool_3d", npy("|b1", [1, 2, 2], bytes([1, 0, 0, 1])))
put("npy", "scalar", npy("<f8", [], struct.pack("<d", 2.5)))
put("npy", "empty_rows", npy("<i4", [0, 5], b""))
put("npy", "truncated", npy("<i8", [4], struct.pack("<2q", 1, 2)))
put("npy", "fortran", npy("<f4", [2], struct.pack("<2f", 1, 2), fortran="True"))
put("npy", "big_endian", npy(">i4", [1], b"\0\0\0\1"))

# ---- partition_config: the whole JSON file
config = """{
 "graph_name": "g", "part_method": "metis", "num_parts": 2, "halo_hops": 1,
 "num_nodes": 10, "num_edges": 20,
 "ntypes": {"paper": 0, "author": 1},
 "etypes": {"author:writes:paper": 0, "paper:cites:paper": 1},
 "node_map": {"paper": [[0, 3], [5, 8]], "author": [[3, 5], [8, 10]]},
 "edge_map": {"author:writes:paper": [[0, 4], [10, 14]], "paper:cites:paper": [[4, 10], [14, 20]]},
 "node_feat_schema": {"paper": {"feat": {"dtype": "float32", "shape": [4]},
                                "train_mask": {"dtype": "uint8", "shape": []}}},
 "edge_feat_schema": {},
 "extra": {"valid_triples": "extra/valid.npy"},
 "part-0": {"node_feats": "part0/node_feat", "edge_feats": "part0/edge_feat", "part_graph": "part0/graph",
            "orig_nids": "part0/orig_nids.npy", "orig_eids": "part0/orig_eids.npy"},
 "part-1": {"node_feats": "part1/node_feat", "edge_feats": "part1/edge_feat", "part_graph": "part1/graph",
            "orig_nids": "part1/orig_nids.npy", "orig_eids": "part1/orig_eids.npy"}
}
"""
put("partition_config", "two_parts", config)
put("partition_config", "gap_in_ranges", config.replace("[5, 8]", "[6, 8]"))
put("partition_config", "one_part_homogeneous", """{"graph_name": "cora", "num_parts": 1, "num_nodes": 4,
 "num_edges": 3, "ntypes": {"_N": 0}, "etypes": {"_N:_E:_N": 0}, "node_map": {"_N": [[0, 4]]},
 "edge_map": {"_N:_E:_N": [[0, 3]]}, "part-0": {"node_feats": "a", "edge_feats": "b", "part_graph": "c",
 "orig_nids": "d", "orig_eids": "e"}}""")

# ---- ip_config: byte 0 = servers per machine, then the file
put("ip_config", "dgl", b"\x00" + b"127.0.0.1 30050\n127.0.0.1 30060\n")
put("ip_config", "dglke", b"\x01" + b"# machines\n127.0.0.1 30050 2\n10.0.0.2 30050 2 # trailing\n")
put("ip_config", "server_client", b"\x00" + b"localhost 30050 server\nnode1.test 30070 client\n\n")
put("ip_config", "overlap", b"\x02" + b"127.0.0.1 30050\n127.0.0.1 30051\n")
put("ip_config", "client_first", b"\x00" + b"127.0.0.1 30050 client\n127.0.0.2\n")

# ---- job_file: the whole YAML file
put("job_file", "full", """command: bin/tessera train sage --num-epochs 20
part_config: data/cora.json
workspace: /srv/job
ip_config: ip_config.txt
num_servers: 1
num_samplers: 0
timeout: 60
run_dir: runs/sage
extra_envs: {OMP_NUM_THREADS: 1}
ssh: {port: 22, username: me, key: ~/.ssh/id_ed25519, connect_timeout: 5, options: [StrictHostKeyChecking=no]}
hosts:
  - host: 127.0.0.1
    base_port: 30050
    trainers: 2
    role: server
    workspace: /data/job
  - host: node1.test
    base_port: 30070
    role: client
    ssh_port: 2222
    ssh_username: other
""")
put("job_file", "minimal", "command: echo hi\npart_config: g.json\nhosts: [{host: localhost}]\n")
put("job_file", "unknown_key", "command: x\npart_config: g.json\nhosts:\n  - host: 10.0.0.1\n    port: 1\n")
put("job_file", "bad_types", "command: [a, b]\npart_config: g.json\nnum_servers: many\nhosts: {host: x}\n")

# ---- kg: layout byte, order byte, delimiter byte, then the files
def kg(layout, order, delim, *files):
    return bytes([layout, order, delim]) + SEP.join(f.encode() for f in files)


put("kg", "names", kg(0, 0, 0, "a\tlikes\tb\nb\tknows\tc\n", "c\tlikes\ta\n", "a\tknows\tc\n"))
put("kg", "openke", kg(1, 0, 0, "3\na\t0\nb\t1\nc\t2\n", "2\nlikes\t0\nknows\t1\n", "2\n0 2 0\n1 0 1\n",
                       "1\n2 1 0\n", "0\n"))
put("kg", "udd", kg(2, 0, 0, "0\ta\n1\tb\n2\tc\n", "0\tlikes\n1\tknows\n", "0\t1\t2\n2\t0\t1\n", "1\t1\t0\n",
                    "0\t0\t2\n"))
put("kg", "raw_udd_htr_comma", kg(3, 1, 2, "a,b,likes\nb,c,knows\n", "c,a,likes\n", "a,c,knows\n"))
put("kg", "udd_hrt_pipe", kg(4, 0, 3, "0|a\n1|b\n", "0|r\n", "0|0|1\n1|0|0\n"))
put("kg", "openke_bad_count", kg(1, 0, 0, "2\na\t0\nb\t1\n", "1\nr\t0\n", "5\n0 1 0\n"))

# ---- ogb: format byte (0 ogb, 1 ogb-mag), then "<path>\n<contents>" files
def ogb(fmt, files):
    return bytes([fmt]) + SEP.join((p + "\n" + c).encode() for p, c in files)


put("ogb", "arxiv_like", ogb(0, [
    ("raw/num-node-list.csv.gz", "4\n"),
    ("raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n"),
    ("raw/num-edge-list.csv.gz", "4\n"),
    ("raw/node-feat.csv.gz", "0.5,1.0\n-1,2e3\n0,0\n1.5,nan\n"),
    ("raw/node-label.csv.gz", "1\n0\nnan\n2\n"),
    ("split/time/train.csv.gz", "0\n1\n"),
    ("split/time/valid.csv.gz", "2\n"),
    ("split/time/test.csv.gz", "3.0\n"),
]))
put("ogb", "edge_out_of_range", ogb(0, [("raw/num-node-list.csv.gz", "2\n"), ("raw/edge.csv.gz", "0,5\n")]))
put("ogb", "mag_like", ogb(1, [
    ("raw/num-node-dict.csv.gz", "author,paper\n2,3\n"),
    ("raw/triplet-type-list.csv.gz", "author,writes,paper\npaper,cites,paper\n"),
    ("raw/relations/author___writes___paper/edge.csv.gz", "0,0\n1,2\n"),
    ("raw/relations/author___writes___paper/num-edge-list.csv.gz", "2\n"),
    ("raw/relations/paper___cites___paper/edge.csv.gz", "0,1\n2,1\n"),
    ("raw/node-feat/paper/node-feat.csv.gz", "1,2\n3,4\n5,6\n"),
    ("raw/node-label/paper/node-label.csv.gz", "0\n1\n0\n"),
    ("raw/node_year/paper/node_year.csv.gz", "2010\n2011\n2019\n"),
    ("split/time/paper/train.csv.gz", "0\n1\n"),
    ("split/time/paper/test.csv.gz", "2\n"),
]))

# ---- rdf: graph.nt, trainingSet.tsv, testSet.tsv
nt = """<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/ont#Person> .
<http://ex.org/b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/ont#Person> .
<http://ex.org/a> <http://ex.org/ont#knows> <http://ex.org/b> .
<http://ex.org/a> <http://ex.org/ont#name> "Ann \\"A\\""@en .
_:n1 <http://ex.org/ont#age> "42"^^<http://www.w3.org/2001/XMLSchema#int> .
# a comment
_:n1 <http://ex.org/ont#about> <http://ex.org/b> .
"""
put("rdf", "labelled", SEP.join([nt.encode(), b"id\tperson\tlabel\nhttp://ex.org/a\tx\thttp://ex.org/cls#1\n",
                                 b"id\tlabel\nhttp://ex.org/b\thttp://ex.org/cls#2\n"]))
put("rdf", "graph_only", nt)
put("rdf", "missing_dot", "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b>\n")

# ---- chunked: "<path>\n<contents>" files, metadata.json naming the chunks
def chunked(files):
    return SEP.join(p.encode() + b"\n" + (c if isinstance(c, bytes) else c.encode()) for p, c in files)


def floats(*v):
    return struct.pack("<%df" % len(v), *v)


def int64s(*v):
    return struct.pack("<%dq" % len(v), *v)


NUMPY = '{"name": "numpy"}'
put("chunked", "homogeneous_csv", chunked([
    ("metadata.json", '{"graph_name": "tiny", "node_type": ["_N"], "num_nodes_per_chunk": [[3, 2]],'
                      ' "edge_type": ["_N:_E:_N"], "num_edges_per_chunk": [[3, 2]],'
                      ' "edges": {"_N:_E:_N": {"format": {"name": "csv", "delimiter": ","},'
                      ' "data": ["edges/e0.csv", "edges/e1.csv"]}},'
                      ' "node_data": {"_N": {"feat": {"format": %s, "data": ["nd/feat.npy"]},'
                      ' "label": {"format": %s, "data": ["nd/label0.npy", "nd/label1.npy"]},'
                      ' "train_mask": {"format": %s, "data": ["nd/train.npy"]}}}}' % (NUMPY, NUMPY, NUMPY)),
    ("edges/e0.csv", "0,1\n1,2\n2,3\n"), ("edges/e1.csv", "3,4\n4,0\n"),
    ("nd/feat.npy", npy("<f4", [5, 2], floats(*range(10)))),
    ("nd/label0.npy", npy("<i8", [3], int64s(0, 1, 0))), ("nd/label1.npy", npy("<i8", [2], int64s(1, 0))),
    ("nd/train.npy", npy("|u1", [5], bytes([1, 0, 1, 0, 1]))),
]))
put("chunked", "heterogeneous_npy", chunked([
    ("metadata.json", '{"graph_name": "hand", "node_type": ["paper", "author"], "num_nodes_per_chunk": [[4, 3], [5]],'
                      ' "edge_type": ["author:writes:paper", "paper:cites:paper"], "num_edges_per_chunk": [[3], [4, 1]],'
                      ' "edges": {"author:writes:paper": {"format": {"name": "csv", "delimiter": " "},'
                      ' "data": ["edges/writes.csv"]},'
                      ' "paper:cites:paper": {"format": %s, "data": ["edges/cites0.npy", "edges/cites1.npy"]}},'
                      ' "node_data": {"paper": {"feat": {"format": %s, "data": ["nd/pf.npy"]},'
                      ' "label": {"format": %s, "data": ["nd/pl.npy"]}},'
                      ' "author": {"age": {"format": %s, "data": ["nd/aa.npy"]}}},'
                      ' "edge_data": {"paper:cites:paper": {"weight": {"format": %s, "data": ["ed/w.npy"]}}}}'
                      % ((NUMPY,) * 5)),
    ("edges/writes.csv", "0 1\n1  2\n4 6\n"),
    ("edges/cites0.npy", npy("<i8", [4, 2], int64s(0, 1, 1, 2, 2, 3, 6, 0))),
    ("edges/cites1.npy", npy("<i4", [1, 2], struct.pack("<2i", 5, 4))),
    ("nd/pf.npy", npy("<f4", [7, 2], floats(*range(14)))),
    ("nd/pl.npy", npy("<i8", [7], int64s(*(i % 3 for i in range(7))))),
    ("nd/aa.npy", npy("<i4", [5], struct.pack("<5i", *range(20, 25)))),
    ("ed/w.npy", npy("<f4", [5], floats(0, 0.5, 1, 1.5, 2))),
]))


# ---- request: choice byte (bit 0 typed partition, bit 1 rendezvous store, bits 2-5 frame count), the 256-byte
# header, (u32 length, frame)*. The target maps `type` onto its lists (type mod their length; 0 is no valid type).
PARTITION = dict(pull=9, push=1, sparse_step=2, in_degrees=3, find_edges=4, top_in_degree=5, out_degrees=6,
                 has_edges=7, sample=8)
STORE = dict(set=6, get=1, add=2, check=3, delete=4, count=5)


def request(typed, store, type_, frames, shape=(), **fields):
    dims = tuple(shape) + (0,) * (4 - len(shape))
    choice = int(typed) | (int(store) << 1) | (len(frames) << 2)
    out = bytes([choice]) + header(type_, len(shape), dims, num_frames=len(frames), **fields)
    for f in frames:
        out += struct.pack("<I", len(f)) + f
    return out


P = PARTITION
grads = floats(*([1.0] * 12))
put("request", "pull_emb", request(0, 0, P["pull"], [int64s(0, 1, 2)], (3,), name=b"emb"))
put("request", "pull_feat", request(0, 0, P["pull"], [int64s(0, 5)], (2,), name=b"node/_N/feat"))
put("request", "pull_typed_feat", request(1, 0, P["pull"], [int64s(0, 1)], (2,), name=b"node/paper/feat"))
put("request", "push_add", request(0, 0, P["push"], [int64s(0, 1), floats(*([1.0] * 8))], (2, 4), name=b"emb",
                                   dtype=2, iarg=1))
for kind in range(4):
    put("request", f"sparse_step_{kind}", request(0, 0, P["sparse_step"], [int64s(0, 1, 1), grads], (3, 4),
                                                  name=b"emb", dtype=2, iarg=kind))
put("request", "in_degrees", request(0, 0, P["in_degrees"], [int64s(0, 1, 2)], (3,)))
put("request", "in_degrees_typed", request(1, 0, P["in_degrees"], [int64s(0, 1, 2)], (3,), iarg=2))
put("request", "out_degrees", request(0, 0, P["out_degrees"], [int64s(0, 39)], (2,)))
put("request", "out_degrees_typed", request(1, 0, P["out_degrees"], [int64s(0, 1, 29)], (3,), iarg=1))
put("request", "find_edges", request(0, 0, P["find_edges"], [int64s(0, 1, 2)], (3,)))
put("request", "find_edges_typed", request(1, 0, P["find_edges"], [int64s(0, 1, 2)], (3,)))
put("request", "top_in_degree", request(0, 0, P["top_in_degree"], [], iarg=5))
put("request", "has_edges", request(0, 0, P["has_edges"], [int64s(0, 1), int64s(1, 2)], (2,)))
put("request", "has_edges_typed", request(1, 0, P["has_edges"], [int64s(0, 1), int64s(1, 2), int64s(0, 2)], (2,)))
# The sample spec frame: fanout, replace, key, number of per-type fanouts, then those.
put("request", "sample", request(0, 0, P["sample"], [int64s(0, 1, 2), int64s(3, 0, 7, 0)], (3,)))
# Weighted: a third frame names each edge type's weight tensor, each name ended by a zero byte.
put("request", "sample_weighted", request(0, 0, P["sample"], [int64s(0, 1), int64s(2, 1, 7, 0),
                                                             b"edge/_N:_E:_N/w\0"], (2,)))
put("request", "sample_typed", request(1, 0, P["sample"], [int64s(0, 1), int64s(-1, 0, 7, 3, 2, -1, 1)], (2,)))
put("request", "sample_typed_weighted", request(1, 0, P["sample"], [
    int64s(0, 1), int64s(-1, 0, 7, 3, 2, -1, 1),
    b"edge/author:writes:paper/w\0edge/paper:written-by:author/w\0edge/paper:cites:paper/w\0"], (2,)))
put("request", "store_set", request(0, 1, STORE["set"], [b"key", b"value"]))
put("request", "store_add", request(0, 1, STORE["add"], [b"n"], iarg=3))
put("request", "store_get", request(0, 1, STORE["get"], [b"key"]))
put("request", "store_count", request(0, 1, STORE["count"], []))

# ---- regression seeds: inputs that crashed a reader before its fix
put("npy", "regress_shape_overflow", npy("|u1", [4294967296, 4294967296], b""))
put("partition_config", "regress_no_node_types",
    '{"graph_name": "g", "num_parts": 1, "num_nodes": 0, "num_edges": 0, "ntypes": {}, "etypes": {},'
    ' "node_map": {}, "edge_map": {}, "part-0": {"node_feats": "a", "edge_feats": "b", "part_graph": "c",'
    ' "orig_nids": "d", "orig_eids": "e"}}')
put("partition_config", "regress_float_num_parts",
    '{"graph_name": "g", "num_parts": 1e300, "num_nodes": 0, "num_edges": 0, "ntypes": {}, "etypes": {}}')
put("message", "regress_float_seed", message(header(5, num_frames=1), [spec.replace(b'"seed":42', b'"seed":1e300')]))
put("message", "regress_float_row_shape", message(header(5, num_frames=1), [spec.replace(b'[4]', b'[1e30]')]))
put("ogb", "regress_huge_node_count", ogb(0, [("raw/num-node-list.csv.gz", "1000000000000\n"),
                                              ("raw/node-label.csv.gz", "1\n"), ("raw/edge.csv.gz", "0,0\n")]))
put("ogb", "regress_negative_node_count", ogb(0, [("raw/num-node-list.csv.gz", "-5\n"),
                                                  ("raw/node-label.csv.gz", "1\n"), ("raw/edge.csv.gz", "0,0\n")]))
# A set without its value frame read the value before checking the count; a counter past int64 (the two adds
# overflow together: the store's values outlive an input); sampling with replacement at a fanout of 2^40, which
# allocated it, and without, which reserved it.
put("request", "regress_store_set_one_frame", request(0, 1, STORE["set"], [b"key"]))
put("request", "regress_store_add_max_a", request(0, 1, STORE["add"], [b"big"], iarg=2**63 - 1))
put("request", "regress_store_add_max_b", request(0, 1, STORE["add"], [b"big"], iarg=2**63 - 1))
put("request", "regress_sample_huge_fanout_with_replacement",
    request(0, 0, P["sample"], [int64s(0, 1), int64s(2**40, 1, 7, 0)], (2,)))
put("request", "regress_in_degrees_iarg_min", request(0, 0, P["in_degrees"], [int64s(0)], (1,), iarg=-2**63))
put("request", "regress_sample_huge_fanout", request(0, 0, P["sample"], [int64s(0, 1), int64s(2**40, 0, 7, 0)], (2,)))
