#include "tessera/train/gradient_step.h"

#include <torch/torch.h>

#include <vector>

#include "tessera/base/timer.h"
#include "tessera/distributed/grad_sync.h"
#include "tessera/nn/cross_entropy.h"

namespace tessera::train {
namespace {

// optimizer.zero_grad() and backward, with the gradients dropped instead of
// zeroed (PyTorch 2's set_to_none): backward's AccumulateGrad then takes
// each new gradient as it is rather than adding it into zeros, three tensor
// ops fewer per parameter (zero_grad's detach_ and zero_, the add), which
// at a GNN's weight sizes cost their dispatch. A parameter that had a
// gradient and gets none from this loss gets zeros, as zero_grad left it,
// so the optimizer sees what it saw before.
void backward_into_fresh_gradients(torch::optim::Optimizer& optimizer, const torch::Tensor& loss) {
  std::vector<torch::Tensor*> had_gradient;
  for (auto& group : optimizer.param_groups())
    for (torch::Tensor& p : group.params())
      if (p.grad().defined()) {
        had_gradient.push_back(&p);
        p.mutable_grad().reset();
      }
  loss.backward();
  for (torch::Tensor* p : had_gradient)
    if (!p->grad().defined()) p->mutable_grad() = torch::zeros_like(*p);
}

}  // namespace

void allreduce_and_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                        StepResult* r) {
  Timer t;
  const ThreadCpuTimer cpu;
  distributed::allreduce_gradients(model, coll);
  r->allreduce_s += t.seconds();
  r->allreduce_cpu_s += cpu.seconds();
  t.reset();
  optimizer.step();
  r->compute_s += t.seconds();
}

void apply_gradients(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                     const torch::Tensor& loss, StepResult* r) {
  Timer t;
  backward_into_fresh_gradients(optimizer, loss);
  r->compute_s += t.seconds();
  allreduce_and_step(model, optimizer, coll, r);
}

StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels) {
  StepResult r;
  Timer t;
  const torch::Tensor logits = forward();
  const torch::Tensor loss = nn::cross_entropy(logits, labels, &r.correct);
  r.compute_s = t.seconds();
  apply_gradients(model, optimizer, coll, loss, &r);
  t.reset();
  r.loss = loss.item<double>();
  r.compute_s += t.seconds();
  return r;
}

void broadcast_parameters(torch::nn::Module& model, distributed::Collectives& coll) {
  if (coll.size() == 1) return;
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : model.parameters()) {
    torch::Tensor c = p.contiguous();
    coll.broadcast(c.data_ptr<float>(), c.numel(), 0);
    p.copy_(c);
  }
}

}  // namespace tessera::train
