-- Pod templates keyed like their workloads, by (namespace, name), instead
-- of by uid (0002): a batch of new workloads then writes its templates
-- next to each other in the table's B-tree, as it writes the workloads,
-- rather than at random places (uids are random), which made a batched
-- Apply a quarter slower. workload_uid stays a column: a read gives the
-- templates of the uid it asks for, so a workload created again under a
-- name never shows the old one's templates.
CREATE TABLE pod_templates_by_name (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  pod_set INTEGER NOT NULL,
  workload_uid TEXT NOT NULL,
  template TEXT NOT NULL,
  PRIMARY KEY (namespace, name, pod_set)
) STRICT, WITHOUT ROWID;

INSERT INTO pod_templates_by_name
  (namespace, name, pod_set, workload_uid, template)
SELECT w.namespace, w.name, t.pod_set, t.workload_uid, t.template
FROM pod_templates AS t JOIN workloads AS w ON w.uid = t.workload_uid;

DROP TABLE pod_templates;
ALTER TABLE pod_templates_by_name RENAME TO pod_templates;
