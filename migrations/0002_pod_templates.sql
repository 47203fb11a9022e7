-- Pod templates apart from their workloads: kqd keeps every workload it
-- schedules in memory, but not the templates, which admission never reads
-- (they can be most of a workload's size). A workload row's body marks
-- each such pod set (PodSet.template_on_disk) instead of holding its text.
-- Rows are written once, when the workload is created, and deleted with
-- it. Keyed by the workload's uid, so a workload created again under the
-- same name never shows the old one's templates. template is the
-- template as canonical JSON text.
--
-- Workload rows written before this migration keep their templates inline
-- (PodSet.template_json) and are read as they are.
CREATE TABLE pod_templates (
  workload_uid TEXT NOT NULL,
  pod_set INTEGER NOT NULL,
  template TEXT NOT NULL,
  PRIMARY KEY (workload_uid, pod_set)
) STRICT, WITHOUT ROWID;
