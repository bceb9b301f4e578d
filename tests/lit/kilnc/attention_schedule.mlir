// The Hopper attention forward's schedule: by default (auto) its two
// consumer warpgroups take turns issuing their products in a causal
// attention and not in a non-causal one; --attention-schedule forces either.
// RUN: kilnc %s --inference --function causal -o %t.a.kiln --stats 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: kilnc %s --inference --function causal --attention-schedule=cooperative -o %t.c.kiln --stats 2>&1 | FileCheck %s --check-prefix=COOP
// RUN: kilnc %s --inference --function causal --attention-schedule=pingpong -o %t.p.kiln --stats 2>&1 | FileCheck %s --check-prefix=TURNS
// RUN: not kilnc %s --inference --function full --attention-schedule=turns -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BAD

// AUTO-DAG: attention_wgmma_fwd [__nv_bfloat16 tensor cores: 128 rows kept, 128 streamed by TMA in 4 stages, consumers take turns; tq 256 tk 256 d 64/64 causal,
// AUTO-DAG: attention_wgmma_fwd [__nv_bfloat16 tensor cores: 128 rows kept, 128 streamed by TMA in 4 stages; tq 256 tk 256 d 64/64, 384 threads
// COOP: attention_wgmma_fwd [__nv_bfloat16 tensor cores: 128 rows kept
// COOP-NOT: take turns
// TURNS: attention_wgmma_fwd [{{.*}}consumers take turns
// TURNS-NOT: stages; tq
// BAD: kilnc: error: --attention-schedule must be auto, cooperative or pingpong, got 'turns'

func.func @causal(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>,
                  %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = kiln.attention %q, %k, %v causal : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}

func.func @full(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>,
                %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = kiln.attention %q, %k, %v : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
