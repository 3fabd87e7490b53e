-- Every run's series and default baseline (view run_series, the one definition): the
-- Overview's series picker and its default (the series whose latest completed run has a
-- baseline, so a one-off run of its own series never takes over the first screen).
SELECT run_id, series, baseline_run_id
FROM run_series;
