"""Names that look like rich console markup stay text in the terminal output of ``run``
(issue 16): before, ``[/bad]`` in a test case name ended the run's summary in a MarkupError
traceback (the results were written, the exit status was not)."""

from __future__ import annotations

from pathlib import Path

from bench.cli.main import main

CONFIG = """\
- name: '[/bad]Case[bold]'
  labels: ['[/]lbl']
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: '[red]w[/]'
    params: {nodes: 3, pods: 4}
"""


def test_markup_in_names_is_printed_as_text(tmp_path: Path, capsys) -> None:
    (tmp_path / "cfg" / "misc").mkdir(parents=True)
    (tmp_path / "cfg" / "misc" / "performance-config.yaml").write_text(CONFIG)
    code = main(["run", "--config", str(tmp_path / "cfg"), "--label", "", "--out",
                 str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    assert "[/bad]Case[bold]/[red]w[/]" in out
