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
           version=1):
    h = struct.pack("<IHHQiBBH4qq4d", magic, version, type_, 7, status, dtype, ndim, num_frames, *shape, 0,
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
