// The page's module (cppgrad_web.js / .wasm): web::Session for JavaScript through embind. The only file that sees
// emscripten. web/worker.js owns the one PageSession:
//
//   const s = new Module.PageSession();
//   s.init(JSON.stringify(config))      -> {vocab, context, params, bigram_val_loss, steps_done, max_steps,
//                                           tokens_per_step, command, config: {seed, lr, format, steps, ...}}
//   s.load(path)                        -> the same, for a checkpoint in the module's file system
//   s.steps(n)                          -> the same, the run grown to n steps in all (train --resume --steps n)
//   s.train(n)                          -> {steps:[{step, loss}], evals:[{step, train_loss, val_loss, val_bpb}], done}
//   s.attention(word)                   -> {tokens, layers, heads, T, maps: Float32Array}
//   s.samples(num, temperature, top_k, top_p, seed, prompt) -> [{text, steps:[{token, prob, raw_top, filtered_top}]}]
//   s.history()                         -> {losses:[{step, loss}], evals:[{step, train_loss, val_loss}]}: the
//                                           steps' losses and evaluations the run knows (a loaded checkpoint's too)
//   s.save(path)                        -> {steps_done}
//   s.graph(what)                       -> {json} (web/graph_json.h)
//
// Every call returns {error: "one line"} instead when the library refuses (an exception does not cross into
// JavaScript with its message: the worker posts the line to the page).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/gpt/config.h"
#include "web/graph_json.h"
#include "web/session.h"

namespace {

using emscripten::val;
using namespace cppgrad;

val error(const std::string& message) {
  val out = val::object();
  out.set("error", message);
  return out;
}

// Runs f, turning an exception into {error}.
template <typename F>
val guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return error(e.what());
  }
}

// A JavaScript number as a whole number: NaN, a fraction or one beyond 2^53 is refused, not cast (a cast of NaN or
// of a number past int64's range is undefined behaviour).
std::int64_t whole(double v, const char* what) {
  if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0) || v != static_cast<double>(static_cast<std::int64_t>(v)))
    throw std::invalid_argument(std::string(what) + " must be a whole number, got " + std::to_string(v));
  return static_cast<std::int64_t>(v);
}

template <typename T, typename F>
val array_of(const std::vector<T>& items, F&& convert) {
  val out = val::array();
  for (const T& item : items) out.call<void>("push", convert(item));
  return out;
}

val info_val(const web::SessionInfo& i) {
  val out = val::object();
  out.set("vocab", static_cast<double>(i.vocab));
  out.set("context", static_cast<double>(i.context));
  out.set("params", static_cast<double>(i.params));
  out.set("bigram_val_loss", i.bigram_val_loss);
  out.set("steps_done", static_cast<double>(i.steps_done));
  out.set("max_steps", static_cast<double>(i.max_steps));
  out.set("tokens_per_step", static_cast<double>(i.tokens_per_step));
  out.set("command", i.command);
  out.set("config", val::global("JSON").call<val>("parse", i.config_json));  // TrainConfig's keys, as an object
  return out;
}

val step_loss_val(const web::StepLoss& s) {
  val o = val::object();
  o.set("step", static_cast<double>(s.step));
  o.set("loss", s.loss);
  return o;
}

val evaluation_val(const gpt::Evaluation& e) {
  val o = val::object();
  o.set("step", static_cast<double>(e.step));
  o.set("train_loss", e.train_loss);
  o.set("val_loss", e.val_loss);
  o.set("val_bpb", e.val_bpb);
  return o;
}

val token_probs(const std::vector<web::TokenProb>& probs) {
  return array_of(probs, [](const web::TokenProb& p) {
    val o = val::object();
    o.set("label", p.label);
    o.set("prob", p.prob);
    return o;
  });
}

class PageSession {
 public:
  // emscripten's runtime starts with the umask 0777, so every file the module wrote (a checkpoint, before the worker
  // reads it back) would be created unreadable; a POSIX process starts with 022.
  PageSession() { ::umask(022); }

  val init(const std::string& config_json) {
    return guarded([&] {
      session_ = std::make_unique<web::Session>(config_json);
      return info_val(session_->info());
    });
  }
  val load(const std::string& path) {
    return guarded([&] {
      session_ = web::Session::from_checkpoint(path);
      return info_val(session_->info());
    });
  }
  val info() {
    return guarded([&] { return info_val(session().info()); });
  }
  val steps(double steps) {
    return guarded([&] {
      session().grow_steps(whole(steps, "steps"));
      return info_val(session().info());
    });
  }
  val train(double count) {
    return guarded([&] {
      const web::TrainChunk c = session().train(whole(count, "train: the number of steps"));
      val out = val::object();
      out.set("steps", array_of(c.steps, step_loss_val));
      out.set("evals", array_of(c.evals, evaluation_val));
      out.set("done", c.done);
      return out;
    });
  }
  val history() {
    return guarded([&] {
      val out = val::object();
      out.set("losses", array_of(session().step_losses(), step_loss_val));
      out.set("evals", array_of(session().evaluations(), evaluation_val));
      return out;
    });
  }
  val attention(const std::string& word) {
    return guarded([&] {
      const web::AttentionView a = session().attention(word);
      val out = val::object();
      out.set("tokens", array_of(a.tokens, [](const std::string& t) { return val(t); }));
      out.set("layers", static_cast<double>(a.layers));
      out.set("heads", static_cast<double>(a.heads));
      out.set("T", static_cast<double>(a.T));
      // A copy: the view into the module's memory is invalid once the memory grows.
      out.set("maps", val::global("Float32Array")
                          .new_(val(emscripten::typed_memory_view(a.maps.size(), a.maps.data()))));
      return out;
    });
  }
  val samples(double num, double temperature, double top_k, double top_p, double seed, const std::string& prompt) {
    return guarded([&] {
      const std::int64_t sample_seed = whole(seed, "the sample seed");
      if (sample_seed < 0) throw std::invalid_argument("the sample seed must not be negative");
      const web::SampleRequest r{.num = whole(num, "samples: num"),
                                 .sampling = {.temperature = temperature, .top_k = whole(top_k, "--top-k"),
                                              .top_p = top_p},
                                 .seed = static_cast<std::uint64_t>(sample_seed), .prompt = prompt};
      return array_of(session().samples(r), [](const web::Sample& s) {
        val o = val::object();
        o.set("text", s.text);
        o.set("steps", array_of(s.steps, [](const web::SampleStep& st) {
          val step = val::object();
          step.set("token", st.token);
          step.set("prob", st.prob);
          step.set("raw_top", token_probs(st.raw_top));
          step.set("filtered_top", token_probs(st.filtered_top));
          return step;
        }));
        return o;
      });
    });
  }
  val save(const std::string& path) {
    return guarded([&] {
      session().save(path);
      val out = val::object();
      out.set("steps_done", static_cast<double>(session().info().steps_done));
      return out;
    });
  }
  val graph(const std::string& what) {
    return guarded([&] {
      val out = val::object();
      out.set("json", web::lesson_graph_json(web::parse_lesson_graph(what)));
      return out;
    });
  }

 private:
  web::Session& session() {
    if (!session_) throw std::logic_error("no run yet: send init or load first");
    return *session_;
  }
  std::unique_ptr<web::Session> session_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(cppgrad_web) {
  // Where the page puts the word list (cppgrad-gpt's default --data, so a checkpoint names the same file on both
  // sides) and a dropped text: the worker reads them here rather than spelling them again.
  emscripten::constant("defaultData", std::string(gpt::kDefaultData));
  emscripten::constant("droppedDir", std::string(web::kDroppedDir));
  emscripten::class_<PageSession>("PageSession")
      .constructor<>()
      .function("init", &PageSession::init)
      .function("load", &PageSession::load)
      .function("info", &PageSession::info)
      .function("steps", &PageSession::steps)
      .function("train", &PageSession::train)
      .function("history", &PageSession::history)
      .function("attention", &PageSession::attention)
      .function("samples", &PageSession::samples)
      .function("save", &PageSession::save)
      .function("graph", &PageSession::graph);
}
