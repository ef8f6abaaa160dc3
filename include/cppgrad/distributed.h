#pragma once
// cppgrad's distributed layer in one include, beside <cppgrad/cppgrad.h>: processes started by mpirun as one group,
// torch.distributed's collectives over it, the sum over ranks in a fixed tree, and DDP's weight broadcast. Built only
// where MPI is found; link cppgrad::distributed. Run with `mpirun -np N program`.
//
//   distributed::ProcessGroup group;
//   distributed::broadcast_parameters(group, model.parameters());
//   ... each step: loss.backward(); distributed::tree_sum(group, gradients); opt.step();
#include "cppgrad/cppgrad.h"
#include "distributed/collectives.h"
#include "distributed/parameters.h"
#include "distributed/process_group.h"
#include "distributed/tree_sum.h"
