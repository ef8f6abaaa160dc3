#pragma once
// `cppgrad-gpt merge --checkpoint LORA --out CKPT`: a LoRA checkpoint (train --init CKPT --lora-rank R) as a plain
// checkpoint, each adapter folded into its weight, W + (alpha / r) B A (models/gpt/lora_merge.h). The result needs no
// base: sample, eval, export and train --init read it as any checkpoint. Neither --checkpoint nor its base is ever
// the output.

namespace cppgrad::gpt {

int cmd_merge(int argc, char** argv);

}  // namespace cppgrad::gpt
