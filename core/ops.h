#pragma once
// Every differentiable op: the umbrella over the op groups, one header per group, each declaring the ops its
// core/ops/<group>.cpp defines, with their shapes. Each op is one free function computing the forward on raw
// contiguous memory, with its backward lambda right below it.
// Shape vocabulary: B batch, T/L sequence, C channels/classes, D features, H heads, V vocabulary, N rows.
//
// Library code includes only the groups it calls (a new op then rebuilds only its group's users); a program
// includes this header, or <cppgrad/cppgrad.h>.
#include "core/autograd.h"
#include "core/ops/attention.h"
#include "core/ops/compare.h"
#include "core/ops/dropout.h"
#include "core/ops/elementwise.h"
#include "core/ops/layer_norm.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/scatter.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "core/ops/views.h"
#include "core/tensor.h"
