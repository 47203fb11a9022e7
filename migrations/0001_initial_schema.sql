-- kq's initial schema. Forward-only: never edit this file once merged; add
-- 0002_<description>.sql instead (see README.md).
--
-- Every table is STRICT, so a value of the wrong type is an error rather
-- than silently stored. Protos are stored as serialized kq.v1 messages;
-- the columns beside them are the keys and the fields kqd filters on.

-- Configuration objects (everything but workloads), one row per object.
-- kind is Kueue's kind name ("ClusterQueue"); namespace is '' for
-- cluster-scoped kinds. spec is a serialized kq.v1.ConfigObject.
CREATE TABLE objects (
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  revision INTEGER NOT NULL,
  spec BLOB NOT NULL,
  PRIMARY KEY (kind, namespace, name)
) STRICT;

-- Workloads in every state. finished is 1 once the Finished condition is
-- true; start-up reads only finished = 0 rows, through
-- workloads_by_finished, so finished history does not slow it down.
-- creation_time_us is Unix microseconds. body is a serialized
-- kq.v1.Workload (spec and status).
CREATE TABLE workloads (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  uid TEXT NOT NULL,
  queue_name TEXT NOT NULL,
  priority INTEGER NOT NULL,
  creation_time_us INTEGER NOT NULL,
  state TEXT NOT NULL,
  finished INTEGER NOT NULL CHECK (finished IN (0, 1)),
  revision INTEGER NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (namespace, name)
) STRICT;

CREATE INDEX workloads_by_finished ON workloads (finished, namespace, name);

-- The change log behind Watch: the events of each committed batch, in
-- order (seq), pruned to a bounded number of rows. type is ADDED, MODIFIED
-- or DELETED; body is a serialized kq.v1.Workload when kind is 'Workload'
-- and a kq.v1.ConfigObject otherwise.
CREATE TABLE events (
  revision INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (revision, seq)
) STRICT;

-- Single values of the store. 'revision' is the revision of the last
-- committed batch.
CREATE TABLE meta (
  key TEXT NOT NULL PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT;

INSERT INTO meta (key, value) VALUES ('revision', 0);
