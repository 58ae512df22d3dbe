"""The names the report writes under and verify reads it by: its numbers file and its
title's opening words. In a module of their own so that `sacscale report` (and what checks
a report's folder) names them before loading the report's tables and plots (pandas, scipy,
matplotlib)."""

NUMBERS_NAME = "numbers.json"
# a report's title, before its set's name: report.md's first line is `# ` and the title
TITLE_OPENING = "sacscale run set "
