#pragma once
// cppgrad's distributed layer in one include, beside <cppgrad/cppgrad.h>: processes started by mpirun as one group,
// torch.distributed's collectives over it, and data-parallel training's two calls (DDP's weight broadcast and bucketed
// gradient averaging). Built only where MPI is found; link cppgrad::distributed. Run with `mpirun -np N program`.
//
//   distributed::ProcessGroup group;
//   distributed::broadcast_parameters(group, model.parameters());
//   ... each step: loss.backward(); distributed::average_gradients(group, model.parameters()); opt.step();
#include "cppgrad/cppgrad.h"
#include "distributed/collectives.h"
#include "distributed/gradients.h"
#include "distributed/process_group.h"
