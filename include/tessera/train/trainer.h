// One include for a program that trains a GNN on Tessera, as a user's own trainer does (examples/cpp): the
// headers below, each one concern. Include them one by one where a file needs only some.
#pragma once

#include "tessera/train/accuracy.h"             // accuracy(): node classification's evaluation
#include "tessera/train/batch_views.h"          // features_of, labels_of, rows_of, blocks_of
#include "tessera/train/checkpoint.h"           // TrainingCheckpoints, dense_state
#include "tessera/train/epoch_loop.h"           // EpochLoop, EpochLoopOptions, RunSummary, final_record
#include "tessera/train/feature_cache_setup.h"  // feature_caches(), from --cache-remote-features
#include "tessera/train/gradient_step.h"        // StepResult, supervised_step, apply_gradients, broadcast_parameters
#include "tessera/train/node_job.h"             // validate, join_job, count_classes, equalize_steps, ...
#include "tessera/train/node_train_options.h"   // NodeTrainOptions: the shared flags
#include "tessera/train/phase_times.h"          // PhaseTimes
#include "tessera/train/run_output.h"           // open_run_log, out_dir_or_default
#include "tessera/train/train_loop.h"           // TrainLoop, TrainTask: the one loop
