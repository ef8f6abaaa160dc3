#include "train/mpi/mpi_link.h"

#include "distributed/parameters.h"
#include "distributed/process_group.h"
#include "distributed/tree_sum.h"

namespace cppgrad::train {
namespace {

// train::ProcessLink over a distributed::ProcessGroup.
class MpiLink final : public ProcessLink {
 public:
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.world_size(); }
  void tree_sum(const std::vector<Tensor>& tensors) override { distributed::tree_sum(group_, tensors); }
  std::vector<double> all_gather(const std::vector<double>& values) override {
    return distributed::all_gather(group_, values);
  }
  void broadcast(const std::vector<Tensor>& tensors) override { distributed::broadcast_parameters(group_, tensors, 0); }

 private:
  distributed::ProcessGroup group_;
};

}  // namespace

std::unique_ptr<ProcessLink> join_mpi_processes() { return std::make_unique<MpiLink>(); }

}  // namespace cppgrad::train
