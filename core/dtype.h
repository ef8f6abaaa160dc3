#pragma once
// Element types a tensor can hold. Floating ops run the same code for float32 (training) and
// float64 (gradient checks, PyTorch parity); int64 holds token ids and targets; bool holds masks.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cppgrad {

enum class DType : std::uint8_t { Float32, Float64, Int64, Bool };

inline const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "unknown";
}

inline std::size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

inline bool is_floating(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

// The C++ type behind each dtype; bool is stored as one byte per element.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }

// Calls f(T{}) with T = float or double according to dt; other dtypes are an error naming op.
template <typename F>
decltype(auto) dispatch_floating(DType dt, const char* op, F&& f) {
  switch (dt) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default:
      throw std::invalid_argument(std::string(op) + ": expected a floating tensor (float32 or float64), got " +
                                  dtype_name(dt));
  }
}

// Calls f(T{}) for any dtype (T = float, double, int64_t, bool).
template <typename F>
decltype(auto) dispatch_all(DType dt, F&& f) {
  switch (dt) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int64: return f(std::int64_t{});
    case DType::Bool: return f(bool{});
  }
  throw std::logic_error("dispatch_all: unknown dtype");
}

}  // namespace cppgrad
