"""The detector study: false alarms and power of ``schedperf compare``, measured.

Run it with ``python bench/study_detector.py`` (bench/study/cli.py; all options: ``--help``).

    settings.py         StudySettings (the CLI options) and the shared constants
    configs.py          the scheduler configs: default profile + InjectedSlowdown at a size
    probe.py            the workloads by label, and which have pods with the feature (the probe)
    compare_runs.py     the real `schedperf compare` A/A runs (wall time, A/A data)
    counts.py           instruction counts: counted in a slot, read from compare, judged
    instructions.py     instruction mode: A/A figures, what to count, judging, attribution
    slowdown_counts.py  instruction mode: BASE and calibrated HEAD counts, in parallel slots
    time_pools.py       time mode: pools of paced rounds, calibration from the A/A pool
    time_draws.py       time mode: resampled decisions, their rates, attribution
    time_mode.py        time mode: the whole half, pools to summary
    run.py              the whole study: both modes, results.json
    report.py           the console summary
    cli.py              the command line (main)

Method (docs/detector-study.md has the details and the numbers):

* Workloads: instructions mode uses ``--label`` (default ``compare``, ``integration-test``
  when no workload carries it), time mode ``--time-label`` (default ``compare-time``, as
  ``schedperf compare``). BASE is the default profile plus the out-of-tree plugin
  ``InjectedSlowdown`` (workloads/example_plugins/slowdown.py) with ``fraction: 0``; a HEAD of
  size ``f`` gives pods with ``--feature`` extra deterministic work. A probe run of every
  workload finds which ones have such pods after their set-up ("affected").
* Calibration per workload: a HEAD of size ``f`` for workload ``w`` adds ``f`` of ``w``'s
  measured BASE cost (instructions: its BASE count; time: its median BASE CPU time per pod
  in the A/A pool), spread over its affected attempts. What each workload actually got is
  measured and reported next to the nominal size.
* A/A, instructions: one real ``schedperf compare --base-config BASE --head-config BASE``
  (its wall time is the cost of a default compare); its two counts per workload give the
  identical-count rate and the false alarms. Time mode runs such a compare too, for its wall
  time only.
* Time mode (time_mode.py): compare judges rounds of *paced pairs* (both sides run at
  once, taking turns on the CPU every 5 ms, so machine drift cancels in each round's ratio);
  a pair is physical, so the study stores paced rounds in pools and resamples rounds, never
  runs. The A/A pool holds ``--pool`` paced rounds of the whole time set with BASE on both
  sides; per size and affected workload, a slowdown pool holds ``--pool-slowdown`` paced
  rounds of that workload alone, BASE against its calibrated HEAD. A decision at ``n``
  rounds draws ``n`` distinct rounds (without replacement) per workload: from the slowdown
  pool for the affected workload of the cell, from the A/A pool for the rest of the set (those
  run the same code under either config), and judges the whole family as compare does
  (Hodges-Lehmann, paired Wilcoxon, Benjamini-Hochberg, the 3 % minimum effect). ``--draws``
  decisions per cell and ``n`` overlap (they share rounds): the figures rest on the pools'
  independent rounds, which results.json states next to them.
* Slowdowns, instructions: every affected workload is counted once per size (counts are
  exact: one count is the whole story), plus ``--controls`` unaffected workloads per size.
* Attribution: for flagged workloads, ``reports.stats.attribute`` over the plugin timings of
  time rounds, as compare does; the study asks whether it names InjectedSlowdown/PreFilter
  first. Time mode attributes every flagged affected workload of every draw from the drawn
  rounds. Instruction counts carry no plugin timings, so for instruction-mode regressions the
  study runs ``--attribution-rounds`` paced time rounds of the flagged workload (what a user
  would run next: ``schedperf compare`` time rounds) at the smallest and the largest size.

Outputs in ``--out``: results.json, time_pools.parquet (every paced round's samples, by
pool), time_decisions.parquet (every resampled decision), instructions.parquet (every
count), the scheduler configs, the compare reports and the raw worker folders.
"""
