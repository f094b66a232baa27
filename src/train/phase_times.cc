#include "tessera/train/phase_times.h"

#include <tuple>

#include <fmt/format.h>

#include "base/field_sums.h"

namespace tessera::train {
namespace {

// Every field add() sums (the blocks' sums go layer by layer).
template <class Times>
auto summed_phase_fields(Times& t) {
  return std::tie(t.sample, t.fetch, t.wait, t.compute, t.allreduce, t.sparse, t.step_cpu, t.allreduce_cpu,
                  t.sample_cpu, t.fetch_cpu, t.steps, t.seeds, t.edges, t.correct, t.loss);
}

void add_block_sums(std::vector<PhaseTimes::BlockSums>& into, size_t layer, double src, double dst, double edges) {
  if (into.size() <= layer) into.resize(layer + 1);
  into[layer].src += src;
  into[layer].dst += dst;
  into[layer].edges += edges;
}

}  // namespace

void PhaseTimes::add_batch(const sampling::MiniBatch& b) {
  sample += b.sample_s;
  fetch += b.fetch_s;
  sample_cpu += b.sample_cpu_s;
  fetch_cpu += b.fetch_cpu_s;
  seeds += static_cast<int64_t>(b.seeds.size());
  for (size_t i = 0; i < b.blocks.size(); ++i) {
    const sampling::Block& block = b.blocks[i];
    edges += block.num_edges();
    add_block_sums(blocks, i, static_cast<double>(block.num_src()), static_cast<double>(block.num_dst),
                   static_cast<double>(block.num_edges()));
  }
}

void PhaseTimes::add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step, double step_cpu_s) {
  add_batch(b);
  step_cpu += step_cpu_s;
  wait += wait_s;
  compute += step.compute_s;
  allreduce += step.allreduce_s;
  allreduce_cpu += step.allreduce_cpu_s;
  sparse += step.sparse_s;
  loss += step.loss;
  correct += step.correct;
  ++steps;
}

void PhaseTimes::add(const PhaseTimes& o) {
  add_fields(summed_phase_fields(*this), summed_phase_fields(o));
  for (size_t i = 0; i < o.blocks.size(); ++i) add_block_sums(blocks, i, o.blocks[i].src, o.blocks[i].dst, o.blocks[i].edges);
}

std::string PhaseTimes::split() const {
  std::string text = fmt::format("sample {:.3f}s fetch {:.3f}s wait {:.3f}s compute {:.3f}s all-reduce {:.3f}s",
                                 sample, fetch, wait, compute, allreduce);
  if (sparse > 0) text += fmt::format(" sparse update {:.3f}s", sparse);
  return text;
}

nlohmann::json PhaseTimes::times() const {
  nlohmann::json j = {{"sample_s", sample}, {"fetch_s", fetch}, {"wait_s", wait}, {"compute_s", compute},
                      {"allreduce_s", allreduce}};
  if (sparse > 0) j["sparse_update_s"] = sparse;
  if (step_cpu > 0) j["step_cpu_s"] = step_cpu;
  if (allreduce_cpu > 0) j["allreduce_cpu_s"] = allreduce_cpu;
  if (sample_cpu > 0) j["sample_cpu_s"] = sample_cpu;
  if (fetch_cpu > 0) j["fetch_cpu_s"] = fetch_cpu;
  if (steps > 0 && !blocks.empty()) {
    const auto n = static_cast<double>(steps);
    nlohmann::json layers = nlohmann::json::array();
    for (const BlockSums& l : blocks) layers.push_back({{"src", l.src / n}, {"dst", l.dst / n}, {"edges", l.edges / n}});
    j["mean_blocks"] = layers;
  }
  return j;
}

}  // namespace tessera::train
