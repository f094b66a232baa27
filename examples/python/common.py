"""What the example scripts share: their command line (the flags of `tessera train sage`, DGL's spellings as
aliases), joining the job, evaluation, and the final metrics line the tests read."""
import argparse
import contextlib
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

import tessera.distributed as tdist
import tessera.dataloading as tload


def parser(description, epochs, fanout, batch_size, lr, hidden, dropout):
    p = argparse.ArgumentParser(description=description)
    add = p.add_argument
    add("--graph-name", "--graph_name", dest="graph_name", required=True)
    add("--ip-config", "--ip_config", dest="ip_config", default=None)
    add("--part-config", "--part_config", dest="part_config", default=None)
    add("--num-epochs", "--num_epochs", dest="num_epochs", type=int, default=epochs)
    add("--fan-out", "--fanout", "--fan_out", dest="fan_out", default=fanout)
    add("--eval-fan-out", "--eval-fanout", dest="eval_fan_out", default="-1")
    add("--batch-size", "--batch_size", dest="batch_size", type=int, default=batch_size)
    add("--eval-batch-size", "--batch_size_eval", dest="eval_batch_size", type=int, default=10000)
    add("--lr", type=float, default=lr)
    add("--weight-decay", "--weight_decay", dest="weight_decay", type=float, default=0.0)
    add("--num-hidden", "--num_hidden", "--n-hidden", dest="num_hidden", type=int, default=hidden)
    add("--dropout", type=float, default=dropout)
    add("--eval-every", "--eval_every", dest="eval_every", type=int, default=0, help="0: after the last epoch")
    add("--log-every", "--log_every", dest="log_every", type=int, default=20)
    add("--seed", type=int, default=0)
    add("--max-batches", dest="max_batches", type=int, default=-1, help="cap on steps per epoch (benchmarks)")
    add("--feature", default="feat", help="node data holding the input features")
    add("--label", default="label", help="node data holding the labels")
    return p


def fanouts(text, layers=None):
    values = [int(v) for v in text.split(",")]
    if layers is not None and len(values) == 1:
        values = values * layers
    return values


def join(args):
    """initialize(), torch.distributed (when launched) and the graph."""
    tdist.initialize(args.ip_config)
    launched = "RANK" in os.environ
    if launched:
        # The job's secured collectives ("gloo" would send the gradients in the clear).
        dist.init_process_group("tessera")
    g = tdist.DistGraph(args.graph_name, part_config=args.part_config)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    return g, launched


def splits(g):
    """This trainer's shares of the training, validation and test nodes."""
    book = g.get_partition_book()
    return [tdist.node_split(g.ndata[mask], book, force_even=True) for mask in ("train_mask", "val_mask", "test_mask")]


def num_classes(g, label):
    return int(g.ndata[label][torch.arange(g.num_nodes())].max()) + 1


def node_batch(g, args):
    """A homogeneous batch's (inputs, labels): the input nodes' features and the seeds' labels."""
    return lambda input_nodes, seeds: (g.ndata[args.feature][input_nodes], g.ndata[args.label][seeds].long())


class StepClock:
    """Where a trainer's steps spend their time, per phase: wall seconds (time.perf_counter) and this thread's
    CPU seconds (time.thread_time; on a host with fewer cores than busy threads every CPU-second the trainer
    spends is one its samplers and servers lack). Phases: wait (for the loader's next batch), inputs (the
    batch's features and labels), forward (model and loss), backward, update (the optimizers). Also the
    process's CPU over the steps, sampler threads included."""
    PHASES = ("wait", "inputs", "forward", "backward", "update")

    def __init__(self):
        self.wall = dict.fromkeys(self.PHASES, 0.0)
        self.cpu = dict.fromkeys(self.PHASES, 0.0)
        self.steps = 0
        self.process_cpu = 0.0  # every thread of the process (sampler threads, collectives) over the steps
        self._mark = (time.perf_counter(), time.thread_time())
        self._process_mark = None

    def restart(self):
        """At the start of an epoch's steps (stop() at their end)."""
        self._mark = (time.perf_counter(), time.thread_time())
        self._process_mark = time.process_time()

    def stop(self):
        if self._process_mark is not None:
            self.process_cpu += time.process_time() - self._process_mark
            self._process_mark = None

    def lap(self, phase):
        now = (time.perf_counter(), time.thread_time())
        self.wall[phase] += now[0] - self._mark[0]
        self.cpu[phase] += now[1] - self._mark[1]
        self._mark = now

    def per_step_ms(self):
        """{phase: [wall ms, CPU ms] per step}."""
        n = max(self.steps, 1)
        ms = {p: [round(1e3 * self.wall[p] / n, 3), round(1e3 * self.cpu[p] / n, 3)] for p in self.PHASES}
        ms["process_cpu"] = round(1e3 * self.process_cpu / n, 3)
        return ms


STEP_CLOCK = StepClock()  # every epoch's steps; report_accuracy prints it


def train_epoch(model, optimizers, loader, batch, args, launched, epoch, rank):
    """One epoch of supervised steps (`batch` turns a mini-batch's nodes into model inputs and labels); DDP's
    join() lets a trainer with fewer batches finish. Returns the steps."""
    steps = 0
    clock = STEP_CLOCK
    clock.restart()
    for step, (input_nodes, seeds, blocks) in steps_of(loader, model, args, launched):
        clock.lap("wait")
        x, y = batch(input_nodes, seeds)
        clock.lap("inputs")
        optimize(optimizers, F.cross_entropy(model(blocks, x), y), args, epoch, step, rank)
        steps += 1
    clock.stop()
    return steps


def steps_of(loader, ddp, args, launched):
    """An epoch's (step, batch), at most --max-batches of them, inside DDP's join() when launched (a trainer with
    fewer batches finishes)."""
    with ddp.join() if launched else contextlib.nullcontext():
        for step, batch in enumerate(loader):
            if step == args.max_batches:
                return
            yield step, batch


def optimize(optimizers, loss, args, epoch, step, rank):
    """One step of every optimizer on `loss` (the forward ends here: STEP_CLOCK times the phases from it);
    trainer 0 logs it every --log-every steps."""
    clock = STEP_CLOCK
    clock.lap("forward")
    for optimizer in optimizers:
        optimizer.zero_grad()
    loss.backward()
    clock.lap("backward")
    for optimizer in optimizers:
        optimizer.step()
    if rank == 0 and (step + 1) % args.log_every == 0:
        print(f"Epoch {epoch:05d} | Step {step:05d} | Loss {loss.item():.4f}", flush=True)
    clock.lap("update")
    clock.steps += 1


def evaluation_due(args, epoch):
    """After the last epoch, and every --eval-every epochs."""
    return epoch == args.num_epochs - 1 or bool(args.eval_every and (epoch + 1) % args.eval_every == 0)


def report_accuracy(g, metrics, train_time, steps, args, launched, loader=None):
    """The final line of a node-classification example: `metrics` (test_acc, val_acc) and its speed (with the
    training `loader`, its sampler threads' time per step)."""
    sampler_ms = {k: round(1e3 * v / max(steps, 1), 3) for k, v in loader.sampler_seconds.items()} if loader else {}
    report(g, {**metrics, "epoch_time_s": train_time / args.num_epochs,
               "batches_per_s": steps / train_time if train_time else 0.0,
               "step_ms": {**STEP_CLOCK.per_step_ms(), "sampler": sampler_ms},
               "trainers": int(all_reduce_sum([1], launched)[0])})


def all_reduce_sum(values, launched):
    t = torch.tensor(values, dtype=torch.float64)
    if launched:
        dist.all_reduce(t)
    return t.tolist()


def accuracy(model, loader, batch, launched):
    """Accuracy over the seeds of every trainer's `loader` (summed over trainers)."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for input_nodes, seeds, blocks in loader:
            x, y = batch(input_nodes, seeds)
            correct += int((model(blocks, x).argmax(1) == y).sum())
            total += len(y)
    model.train()
    correct, total = all_reduce_sum([correct, total], launched)
    return correct / total if total else -1.0


def eval_loader(g, ids, fanout, batch_size):
    return tload.DistNodeDataLoader(g, ids, tload.NeighborSampler(fanout), batch_size=batch_size, shuffle=False)


def report(g, metrics):
    """Trainer 0 prints the final metrics as one JSON line, last (what the tests and benches read)."""
    if g.rank() == 0:
        print(json.dumps(metrics), flush=True)


class Timer:
    def __init__(self):
        self.start = time.perf_counter()

    def seconds(self):
        return time.perf_counter() - self.start


def epoch_timer(g):
    """A clock for an epoch's training, started once every trainer has come to it. Without the barrier, the
    trainer that finished its set-up first counts the others' (for the link example, seconds of
    reverse_edge_ids over every edge) as its first step, and reports the job slower than it trains."""
    g.barrier()
    return Timer()
