// One GraphSAGE training step against its physical bound (issue 49), at the
// shapes of bench/sage.sh: fan-out 10,25, batch 1000, hidden 16, mean
// aggregator, over a 1-partition graph in standalone mode.
//
// Measured in one run, on the same sampled batches and thread count:
//  - the step: what the trainer times as compute (forward, loss, backward,
//    optimizer; train::supervised_step with a 1-process all-reduce), on
//    batches from a loader that aggregates the input rows as `train sage`'s
//    does (LoaderOptions::aggregate_inputs: layer 0's aggregation runs on the
//    sampler thread);
//  - its bound: per layer, the cheaper order (fc_neigh before or after the
//    aggregation) of the layer's GEMMs, forward and backward, each at its
//    own shape (the faster of torch::mm and the GEMM the fused layers call,
//    best of 15 each), plus the aggregation's random-row
//    reads (and the backward's scatter where the input needs a gradient) at
//    the random gather bandwidth measured over a buffer of the layer's input
//    size;
//    layer 0's aggregation is then the loader's, so the step's bound leaves
//    it out (the whole layers' bound, with it, is printed beside).
//    Activations, loss and optimizer are left out: they are the bound's
//    slack.
//  - the same step on fresh batches as the loader delivers them, its sampler
//    thread working beside it, as in the job: wall and the thread's CPU.
// Prints a table and `share` = bound / step time (at most 1).
// With --bound-at, only the bound, at shapes given per layer as
// "src,dst,edges/src,dst,edges" (a trainer's mean_blocks in a job, whose
// partition's batches differ from the whole graph's): GEMMs at those row
// counts, the aggregation's traffic over that many edges at the bandwidth
// measured on a sampled block. Prints bound_ms.
// Usage: bench_sage_step PART_CONFIG [--batches B] [--threads T] [--hidden H] [--rounds R] [--bound-at SHAPES]
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/base/process.h"
#include "tessera/base/timer.h"
#include "tessera/nn/cross_entropy.h"
#include "tessera/nn/sage.h"
#include "tessera/nn/sage_step.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "nn/gemm.h"
#include "standalone_sampling.h"
#include "tessera/train/fused_adam.h"
#include "tessera/train/trainer.h"
#include "train/sage_task.h"

namespace distributed = tessera::distributed;
namespace sampling = tessera::sampling;
namespace nn = tessera::nn;
namespace train = tessera::train;

namespace {

struct LayerShape {
  double num_src = 0, num_dst = 0, nnz = 0;
  std::vector<int64_t> indices;  // one real block's edges, for the gather's bandwidth
  int64_t indices_rows = 0;      // that block's sources
  int64_t in = 0, out = 0;
  bool x_grad = false;  // the layer's input needs a gradient (not the input features)
};

template <typename F>
double best_seconds(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps + 2; ++r) {
    tessera::Timer t;
    f();
    if (r >= 2) best = std::min(best, t.seconds());  // the first ones warm up
  }
  return best;
}

// op(A)[m x k] x [k x n] at these shapes, best of 15; A stored k x m when
// trans_a (a weight's gradient, reduced over the rows: a GEMM of its own
// shape, which OpenBLAS runs at another speed than the forward's). The
// faster of libtorch's mm (the BLAS) and the GEMM the fused layers call
// (nn/gemm.h: its narrow kernels where they apply), so that the bound is
// the best this build can do at the shape.
struct GemmTimes {
  double blas = 0, own = 0;
};

GemmTimes gemm_times(int64_t m, int64_t k, int64_t n, bool trans_a) {
  if (m == 0 || k == 0 || n == 0) return {};
  const torch::Tensor a = trans_a ? torch::randn({k, m}).t() : torch::randn({m, k}), b = torch::randn({k, n});
  torch::Tensor c = torch::empty({m, n});
  GemmTimes t;
  t.blas = best_seconds(15, [&] { torch::mm_out(c, a, b); });
  // a.t() when trans_a is the k x m buffer itself; b^T as the kernels take a weight: n x k.
  const torch::Tensor a_buf = trans_a ? a.t().contiguous() : a.contiguous(), bt = b.t().contiguous();
  t.own = best_seconds(15, [&] {
    if (trans_a)
      nn::detail::gemm(true, false, m, n, k, 1.0f, a_buf.data_ptr<float>(), m, b.data_ptr<float>(), n, 0.0f,
                       c.data_ptr<float>(), n);
    else
      nn::detail::gemm(false, true, m, n, k, 1.0f, a_buf.data_ptr<float>(), k, bt.data_ptr<float>(), k, 0.0f,
                       c.data_ptr<float>(), n);
  });
  return t;
}

double gemm_seconds(int64_t m, int64_t k, int64_t n, bool trans_a = false) {
  const GemmTimes t = gemm_times(m, k, n, trans_a);
  return std::min(t.blas, t.own);
}

// Bytes per second of reading rows of f floats in the order of a real
// block's edges (`indices`, into `rows` rows), summed into one row per
// thread: the aggregation's memory traffic with no work of its own.
double gather_bandwidth(int64_t rows, int64_t f, const std::vector<int64_t>& indices) {
  rows = std::max<int64_t>(rows, 1);
  std::vector<float> x(static_cast<size_t>(rows * f), 1.0f);
  const int64_t reads = static_cast<int64_t>(indices.size());
  const int64_t* idx = indices.data();
  float sink = 0;
  const double s = best_seconds(15, [&] {
#pragma omp parallel reduction(+ : sink)
    {
      std::vector<float> acc(static_cast<size_t>(f), 0.0f);
#pragma omp for schedule(static)
      for (int64_t e = 0; e < reads; ++e) {
        const float* row = x.data() + idx[e] * f;
#pragma omp simd
        for (int64_t j = 0; j < f; ++j) acc[j] += row[j];
      }
      sink += acc[0];
    }
  });
  if (sink < 0) fmt::print("");  // keeps the loop
  return static_cast<double>(reads) * f * sizeof(float) / s;
}

// One linear's GEMMs on `rows` rows at their own shapes: the forward
// [rows x in] x [in x out], the weight's gradient [out x rows] x [rows x in]
// always, the input's [rows x out] x [out x in] when needed.
double linear_seconds(const LayerShape& l, int64_t rows) {
  return gemm_seconds(rows, l.in, l.out) + gemm_seconds(l.out, rows, l.in, true) +
         (l.x_grad ? gemm_seconds(rows, l.out, l.in) : 0.0);
}

// The layer's GEMMs when its aggregation came done (the loader's): fc_self
// and fc_neigh, both on the destinations.
double aggregated_layer_bound(const LayerShape& l) { return 2 * linear_seconds(l, std::llround(l.num_dst)); }

// The layer's own work in seconds, in the cheaper order.
double layer_bound(const LayerShape& l, double* gemm_s, double* agg_s) {
  const int64_t src = std::llround(l.num_src), dst = std::llround(l.num_dst), nnz = std::llround(l.nnz);
  auto linear = [&](int64_t rows) { return linear_seconds(l, rows); };
  const double self = linear(dst);  // fc_self on the destinations
  auto agg = [&](int64_t width, bool backward) {
    const double bw = gather_bandwidth(l.indices_rows, width, l.indices);
    return nnz * width * 4.0 / bw * (backward ? 2.0 : 1.0);
  };
  const double first_gemm = self + linear(src), first_agg = agg(l.out, true);
  const double after_gemm = self + linear(dst), after_agg = agg(l.in, l.x_grad);
  if (first_gemm + first_agg < after_gemm + after_agg) {
    *gemm_s = first_gemm, *agg_s = first_agg;
  } else {
    *gemm_s = after_gemm, *agg_s = after_agg;
  }
  return *gemm_s + *agg_s;
}

// "src,dst,edges/src,dst,edges": one triple per layer.
std::vector<LayerShape> parse_shapes(const std::string& text) {
  std::vector<LayerShape> layers;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('/', at), text.size());
    LayerShape l;
    if (std::sscanf(text.substr(at, end - at).c_str(), "%lf,%lf,%lf", &l.num_src, &l.num_dst, &l.nnz) != 3 ||
        l.num_src < l.num_dst || l.num_dst < 0 || l.nnz < 0)
      throw std::runtime_error("--bound-at: expected src,dst,edges per layer (src >= dst >= 0), separated by '/', got '" +
                               text + "'");
    layers.push_back(l);
    at = end + 1;
  }
  return layers;
}

// The step's bound at `layers` (shapes, widths and a real block's indices
// set), printing a row per layer; `whole` gets the bound with layer 0's
// aggregation (the loader's) counted in.
double step_bound(const std::vector<LayerShape>& layers, double* whole) {
  fmt::print("| layer | sources | destinations | edges | in -> out | GEMMs (ms) | aggregation traffic (ms) |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  double bound = 0;
  *whole = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    double gemm = 0, agg = 0;
    *whole += layer_bound(layers[i], &gemm, &agg);
    bound += i == 0 ? aggregated_layer_bound(layers[i]) : gemm + agg;
    fmt::print("| {} | {:.0f} | {:.0f} | {:.0f} | {} -> {} | {:.3f} | {:.3f}{} |\n", i, layers[i].num_src,
               layers[i].num_dst, layers[i].nnz, layers[i].in, layers[i].out, 1e3 * gemm, 1e3 * agg,
               i == 0 ? " (the loader's, on the sampler thread)" : "");
  }
  return bound;
}

// Sets what the bound needs beyond the layers' sizes: each layer's widths
// (in_feats -> hidden -> classes), whether its input needs a gradient (all
// but the input features), and one sampled block's edges for the gather's
// bandwidth.
void complete_layers(const sampling::MiniBatch& sampled, int64_t in_feats, int64_t hidden, int64_t classes,
                     std::vector<LayerShape>* layers) {
  for (size_t i = 0; i < layers->size(); ++i) {
    LayerShape& l = (*layers)[i];
    l.indices = sampled.blocks[i].indices;
    l.indices_rows = sampled.blocks[i].num_src();
    l.in = i == 0 ? in_feats : hidden;
    l.out = i + 1 == layers->size() ? classes : hidden;
    l.x_grad = i > 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_sage_step PART_CONFIG [--batches B] [--threads T] [--hidden H] [--rounds R]\n");
    return 2;
  }
  int64_t batches = 60, hidden = 16, rounds = 3;
  int threads = 1;
  std::string bound_at;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--batches") batches = std::atoll(argv[i + 1]);
    else if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    else if (flag == "--hidden") hidden = std::atoll(argv[i + 1]);
    else if (flag == "--rounds") rounds = std::atoll(argv[i + 1]);
    else if (flag == "--bound-at") bound_at = argv[i + 1];
    else {
      fmt::print(stderr, "bench_sage_step: unknown flag {}\n", flag);
      return 2;
    }
  }
  try {
    const std::vector<LayerShape> asked = bound_at.empty() ? std::vector<LayerShape>{} : parse_shapes(bound_at);
    if (!bound_at.empty()) batches = 1;  // one block's edges for the gather's bandwidth
    tessera::bench::StandaloneSampling data(argv[1], threads);
    distributed::Context* ctx = data.ctx.get();
    sampling::LoaderOptions lo;
    lo.batch_size = 1000;
    lo.num_samplers = 1;
    lo.seed = 1;
    lo.aggregate_inputs = nn::CsrReduce::kMean;
    sampling::DistDataLoader loader(*ctx, data.sampler, data.train, lo);
    loader.start_epoch(0);
    std::vector<sampling::MiniBatch> kept;
    for (sampling::MiniBatch b; static_cast<int64_t>(kept.size()) < batches && loader.next(&b);) kept.push_back(b);
    // The sampler would go on preparing the epoch's next batches beside the
    // timed steps, on the other core and through the same memory.
    loader.stop();
    if (kept.empty()) throw std::runtime_error("no batch sampled");

    nn::SageOptions mo;
    mo.in_feats = train::features_of(kept[0]).size(1);
    mo.hidden = hidden;
    mo.num_classes = 47;
    mo.num_layers = 2;
    if (!asked.empty()) {
      if (asked.size() != kept[0].blocks.size())
        throw std::runtime_error(fmt::format("--bound-at gives {} layers, the bench's model has {}", asked.size(),
                                             kept[0].blocks.size()));
      std::vector<LayerShape> layers = asked;
      complete_layers(kept[0], mo.in_feats, hidden, mo.num_classes, &layers);
      double whole = 0;
      const double bound = step_bound(layers, &whole);
      fmt::print("bound_ms {:.4f}\n", 1e3 * bound);
      return 0;
    }
    nn::Sage model(mo);
    train::FusedAdam optimizer(model->parameters(), torch::optim::AdamOptions(0.003));
    model->train();
    train::SageTask task(model, optimizer, ctx->collectives());
    auto step = [&](const sampling::MiniBatch& b) {
      return task.step(b, train::labels_of(b).clamp(0, mo.num_classes - 1));
    };
    // Warm up on every kept batch once: the first pass grows the heap and
    // faults in the optimizer's state: timed, it ran up to 3x the steady step.
    for (const auto& b : kept) step(b);
    double compute = 0;
    for (int64_t round = 0; round < rounds; ++round)
      for (const auto& b : kept) compute += step(b).compute_s;
    const double step_s = compute / static_cast<double>(rounds * static_cast<int64_t>(kept.size()));

    // The step's phases, timed apart (the trainer times them together), and
    // the same forward, loss and backward through autograd, as the trainer
    // ran them before the hand-written step.
    {
      nn::SageStep own;  // its buffers grown on every kept batch first, untimed, as the task's were
      for (const auto& b : kept)
        own.run(model, train::blocks_of(b), train::features_of(b), train::rows_of(b.aggregated),
                train::labels_of(b).clamp(0, mo.num_classes - 1));
      double own_s = 0, op = 0, fw = 0, ls = 0, bw = 0;
      for (int r = 0; r < 3; ++r)
        for (const auto& b : kept) {
          const std::vector<nn::BlockTensors> blocks = train::blocks_of(b);
          const torch::Tensor labels = train::labels_of(b).clamp(0, mo.num_classes - 1);
          tessera::Timer t;
          own.run(model, blocks, train::features_of(b), train::rows_of(b.aggregated), labels);
          own_s += t.lap();
          optimizer.step();
          op += t.lap();
          const torch::Tensor logits = model->forward_aggregated(blocks, train::features_of(b), train::rows_of(b.aggregated));
          fw += t.lap();
          int64_t correct = 0;  // as supervised_step: the accuracy comes with the loss
          const torch::Tensor loss = nn::cross_entropy(logits, labels, &correct);
          ls += t.lap();
          optimizer.zero_grad();
          loss.backward();
          bw += t.lap();
        }
      const double n = 3.0 * kept.size();
      fmt::print("| forward, loss, backward (ms) | optimizer (ms) | through autograd: forward (ms) | loss, accuracy (ms) | backward (ms) | autograd / hand-written |\n|---|---|---|---|---|---|\n");
      fmt::print("| {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.2f} |\n\n", 1e3 * own_s / n, 1e3 * op / n,
                 1e3 * fw / n, 1e3 * ls / n, 1e3 * bw / n, (fw + ls + bw) / own_s);
    }
    // The same step on batches as the loader delivers them, its sampler
    // thread preparing the next ones on the other core, as in the job.
    double fresh_wall = 0, fresh_cpu = 0;
    int64_t fresh = 0;
    {
      loader.start_epoch(1);
      for (sampling::MiniBatch b; fresh < batches && loader.next(&b); ++fresh) {
        // Both clocks over the whole step, its tensors' set-up included.
        const tessera::ThreadCpuTimer cpu;
        const tessera::Timer wall;
        step(b);
        fresh_wall += wall.seconds();
        fresh_cpu += cpu.seconds();
      }
      loader.stop();
    }
    // The mean shapes of the kept batches, layer by layer.
    std::vector<LayerShape> layers(2);
    for (const auto& b : kept)
      for (size_t i = 0; i < 2; ++i) {
        layers[i].num_src += static_cast<double>(b.blocks[i].num_src()) / kept.size();
        layers[i].num_dst += static_cast<double>(b.blocks[i].num_dst) / kept.size();
        layers[i].nnz += static_cast<double>(b.blocks[i].num_edges()) / kept.size();
      }
    complete_layers(kept[0], mo.in_feats, hidden, mo.num_classes, &layers);

    double whole = 0;  // the whole layers' bound, with layer 0's aggregation
    const double bound = step_bound(layers, &whole);
    // Layer 0's two GEMM shapes (each runs twice, fc_self and fc_neigh), both ways.
    fmt::print("\n| layer 0 GEMM | shape | BLAS (ms) | Tessera's (ms) |\n|---|---|---|---|\n");
    {
      const int64_t rows = std::llround(layers[0].num_dst), in = layers[0].in, out = layers[0].out;
      const GemmTimes fw = gemm_times(rows, in, out, false), wg = gemm_times(out, rows, in, true);
      fmt::print("| forward | [{} x {}] x [{} x {}] | {:.3f} | {:.3f} |\n", rows, in, in, out, 1e3 * fw.blas, 1e3 * fw.own);
      fmt::print("| weight's gradient | [{} x {}] x [{} x {}] | {:.3f} | {:.3f} |\n", out, rows, rows, in, 1e3 * wg.blas,
                 1e3 * wg.own);
    }
    fmt::print("\n| threads | batches | step (ms) | step's bound (ms) | share of bound | whole layers' bound (ms) | peak RSS (MB) |\n");
    fmt::print("|---|---|---|---|---|---|---|\n");
    fmt::print("| {} | {} | {:.3f} | {:.3f} | {:.2f} | {:.3f} | {:.0f} |\n", threads, kept.size(), 1e3 * step_s,
               1e3 * bound, std::min(1.0, bound / step_s), 1e3 * whole, tessera::peak_rss_bytes() / 1e6);
    if (fresh > 0)
      fmt::print("\n| fresh batches, the sampler beside | step (ms) | its thread's CPU (ms) | share of bound (CPU) |\n"
                 "|---|---|---|---|\n| {} | {:.3f} | {:.3f} | {:.2f} |\n",
                 fresh, 1e3 * fresh_wall / fresh, 1e3 * fresh_cpu / fresh, std::min(1.0, bound * fresh / fresh_cpu));
    fmt::print("step_ms {:.4f}\nbound_ms {:.4f}\n", 1e3 * step_s, 1e3 * bound);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_sage_step: error: {}\n", e.what());
    return 1;
  }
}
