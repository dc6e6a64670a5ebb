-- Store schema, version 10. Tables are internal; the views at the bottom are the read-side
-- contract users query directly. The work of a run only inserts rows: a file's record and a
-- plan's work pointers change by a newer row (source_rows, member_rows: the newest seq per key
-- is current, the views sources and plan_members show it), chunk rows are written once per
-- chunk set and never rewritten, and what the views serve moves only by inserted rows
-- (plan_states, promotions). Inserts of different writers commute, so writers of different
-- shards commit in parallel (see ingest_assets/store/lake_lock.py); maintenance deletes the
-- rows newer ones superseded.

CREATE TABLE schema_version (
    version    INTEGER NOT NULL,
    applied_at TIMESTAMP NOT NULL
);

-- One row per write of a file's record (the newest seq per uri is the file as the store knows
-- it: the view sources). version_id points at the parsed document of the current content (NULL
-- until parsed, or when parsing failed).
CREATE TABLE source_rows (
    uri          VARCHAR NOT NULL,
    path         VARCHAR NOT NULL,
    document_id  UUID NOT NULL,
    shard        VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    size         BIGINT NOT NULL,
    mtime_ns     BIGINT NOT NULL,
    -- What the file's stat said when it was hashed, and when (ns since the epoch, taken before
    -- the stat): a file whose stat still matches and was settled then is not read again.
    ctime_ns     BIGINT,
    inode        BIGINT,
    hashed_at_ns BIGINT,
    deleted      BOOLEAN NOT NULL,
    parse_key    VARCHAR,          -- content hash + parser version the version_id came from
    version_id   UUID,
    updated_at   TIMESTAMP NOT NULL,
    -- 1 + the previous row's of the same uri
    seq          BIGINT NOT NULL,
    PRIMARY KEY (uri, seq)
);

-- Every parsed version of every document, kept so children can be redone without
-- re-parsing and an old version comes back without a parse.
CREATE TABLE documents (
    document_id UUID NOT NULL,
    version_id  UUID NOT NULL,
    source_uri  VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL,
    title       VARCHAR NOT NULL,
    text_length BIGINT NOT NULL,
    parsed_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (document_id, version_id)
);

-- Each document version's body (Document.model_dump_json(), zlib-compressed) in parts of at
-- most 1998 bytes, in order. Small parts stay inline in DuckDB's string segments: appending
-- a document then costs its own bytes at a checkpoint, where whole bodies in one column had
-- every checkpoint after a parse rewrite all of them (a third of a one-file edit's time).
CREATE TABLE document_body_parts (
    document_id UUID NOT NULL,
    version_id  UUID NOT NULL,
    part        INTEGER NOT NULL,
    bytes       BLOB NOT NULL
);

-- Every plan key ever registered, written once (its settings never change: they make the key).
CREATE TABLE plans (
    plan_key      VARCHAR PRIMARY KEY,
    name          VARCHAR NOT NULL,
    fingerprint   VARCHAR NOT NULL,
    settings      JSON NOT NULL,
    registered_at TIMESTAMP NOT NULL
);

-- A plan key's life, as inserted rows (the newest per key, by seq then time, is its state):
-- 'building' (a new key of a plan whose old key still serves), 'live' (the views serve it),
-- 'retired' (stored, served no more). A plan switches keys in one transaction that inserts
-- 'live' for the new key and 'retired' for the old.
CREATE TABLE plan_states (
    plan_key VARCHAR NOT NULL,
    state    VARCHAR NOT NULL,
    seq      BIGINT NOT NULL,
    "at"     TIMESTAMP NOT NULL
);

-- A chunk set: all chunks of one document version at one level from one chunker.
-- set_key hashes (document_id, version_id, level, fingerprint, parent_fingerprint).
CREATE TABLE chunk_sets (
    set_key            VARCHAR PRIMARY KEY,
    document_id        UUID NOT NULL,
    version_id         UUID NOT NULL,
    level              TINYINT NOT NULL,
    fingerprint        VARCHAR NOT NULL,
    parent_fingerprint VARCHAR NOT NULL,  -- '' for parents
    chunk_count        INTEGER NOT NULL,
    token_total        BIGINT NOT NULL,   -- over chunks with a token count
    tokens_counted     INTEGER,           -- chunks with a token count
    tokens_min         INTEGER,
    tokens_max         INTEGER,
    created_at         TIMESTAMP NOT NULL,
    -- The first chunks (at most 5) as [token_count, index, first 60 characters] each: a step's
    -- metadata shows them without reading the chunks.
    preview            JSON
);

CREATE TABLE chunks (
    set_key      VARCHAR NOT NULL,
    id           UUID NOT NULL,
    document_id  UUID NOT NULL,
    version_id   UUID NOT NULL,
    level        TINYINT NOT NULL,
    "index"      INTEGER NOT NULL,
    text         VARCHAR NOT NULL,
    chunker      VARCHAR,
    chunker_hash VARCHAR,
    parent_id    UUID,
    provenance   JSON NOT NULL,
    heading_path VARCHAR[] NOT NULL,
    content_kind VARCHAR NOT NULL,
    token_count  INTEGER,
    metadata     JSON NOT NULL,
    created_at   TIMESTAMP NOT NULL
);

-- Which sets a plan has built for a document (its work pointers; readers see promotions), one
-- row per write, the newest seq per (plan, document, role) current (the view plan_members).
-- role is 'parent', 'child' or 'graph'; based_on is the parent set a child set was cut from
-- (the child set a graph set was built from), so a child set whose parents were replaced is
-- never shown with the new parents.
CREATE TABLE member_rows (
    plan_key    VARCHAR NOT NULL,
    document_id UUID NOT NULL,
    role        VARCHAR NOT NULL,
    set_key     VARCHAR NOT NULL,
    version_id  UUID NOT NULL,
    based_on    VARCHAR NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    -- 1 + the previous row's of the same plan, document and role
    seq         BIGINT NOT NULL,
    PRIMARY KEY (plan_key, document_id, role, seq)
);

-- Graph records for one (parent set, child set) pair; set_key hashes both.
-- What each plan serves of each document, as inserted rows: a version is promoted when the
-- plan has all of it (parents, children cut from them, graph records over both, and vectors
-- of the children where the plan embeds), in one row, so readers switch from the old version
-- to the new one at once. The newest row per (plan, document), by seq then time, is served.
CREATE TABLE promotions (
    plan_key    VARCHAR NOT NULL,
    document_id UUID NOT NULL,
    version_id  UUID NOT NULL,
    parent_set  VARCHAR NOT NULL,
    child_set   VARCHAR NOT NULL,
    graph_set   VARCHAR NOT NULL,
    embedding   VARCHAR,            -- the embedding the children had vectors under (NULL: none)
    seq         BIGINT NOT NULL,    -- 1 + the previous row's of the same plan and document
    run_id      VARCHAR NOT NULL,
    "at"        TIMESTAMP NOT NULL
);

CREATE TABLE graph_sets (
    set_key        VARCHAR PRIMARY KEY,
    document_id    UUID NOT NULL,
    version_id     UUID NOT NULL,
    parent_set_key VARCHAR NOT NULL,
    child_set_key  VARCHAR NOT NULL,
    node_count     INTEGER NOT NULL,
    edge_count     INTEGER NOT NULL,
    created_at     TIMESTAMP NOT NULL
);

CREATE TABLE graph_node_rows (
    set_key    VARCHAR NOT NULL,
    id         VARCHAR NOT NULL,
    label      VARCHAR NOT NULL,
    properties JSON NOT NULL
);

CREATE TABLE graph_edge_rows (
    set_key    VARCHAR NOT NULL,
    source_id  VARCHAR NOT NULL,
    target_id  VARCHAR NOT NULL,
    type       VARCHAR NOT NULL,
    properties JSON NOT NULL
);

-- Chunk sets whose per-set invariants (exact slices, budgets, children inside parents) held
-- when checked. Sets never change once written, so each is checked once; a no-op run checks
-- (and writes) nothing.
CREATE TABLE verified_sets (
    set_key     VARCHAR PRIMARY KEY,
    verified_at TIMESTAMP NOT NULL
);

-- Embeddings. A vector is keyed by the SHA-256 of the text embedded and the model's
-- fingerprint (name, weights, dimension, package versions), so a text embedded once under a
-- model is never embedded again, whatever plan, document or run asks. FLOAT[] (a list) holds
-- any model's dimension and is a DuckLake type (fixed-size arrays are not); searches cast it
-- to FLOAT[dimension].
CREATE TABLE vectors (
    text_hash  VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    vector     FLOAT[] NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- The hash of the text each chunk of a child set embeds under a text mode ('contextual' or
-- 'text'), written once per set and mode.
CREATE TABLE chunk_texts (
    set_key   VARCHAR NOT NULL,
    text_mode VARCHAR NOT NULL,
    chunk_id  UUID NOT NULL,
    text_hash VARCHAR NOT NULL
);

-- Child sets all of whose chunks have a vector under an embedding (model fingerprint and text
-- mode hashed together): the embeddings step's reuse key.
CREATE TABLE embedded_sets (
    set_key    VARCHAR NOT NULL,
    embedding  VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- The embedding stage each plan last ran with (no row: the plan embeds nothing).
CREATE TABLE plan_embeddings (
    plan_key   VARCHAR PRIMARY KEY,
    embedding  VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    text_mode  VARCHAR NOT NULL,
    dimension  INTEGER NOT NULL,
    settings   JSON NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE failure_log (
    source_uri   VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    stage        VARCHAR NOT NULL,  -- 'parse', 'parent', 'child', 'graph'
    plan_key     VARCHAR,
    error        VARCHAR NOT NULL,
    "at"         TIMESTAMP NOT NULL
);

-- Which chunk ids entered ('added') and left ('removed') current_chunks per plan, and which
-- stayed with a row that moved ('changed': a new parent, index or heading path; a text
-- chunk's id fixes its span and text, not its version), appended by the transaction that moved
-- them (see ingest_assets.store.changes); unchanged chunks are not listed. run_id is the
-- Dagster run's id, or a generated 'local-...' id outside Dagster.
CREATE TABLE chunk_changes (
    run_id      VARCHAR NOT NULL,
    plan_key    VARCHAR NOT NULL,
    chunk_id    UUID NOT NULL,
    document_id UUID NOT NULL,
    level       TINYINT NOT NULL,
    "change"    VARCHAR NOT NULL,
    "at"        TIMESTAMP NOT NULL
);

-- How long the work of a step took: one row per step call that parsed, chunked or built
-- something (a no-op writes none). ``ingest plans --diff`` estimates time from these rates.
CREATE TABLE step_timings (
    run_id    VARCHAR NOT NULL,
    step      VARCHAR NOT NULL,   -- 'parse', 'parent', 'child', 'graph', 'embed', 'run' (a Dagster run's own time)
    plan_key  VARCHAR,
    items     INTEGER NOT NULL,   -- documents parsed, sets chunked, built or embedded
    work      BIGINT NOT NULL,    -- bytes parsed, or characters chunked (see engine.timing)
    seconds   DOUBLE NOT NULL,
    "at"      TIMESTAMP NOT NULL
);

-- What each engine step call did, per shard (and plan): the numbers of its typed result
-- (ingest_assets.engine.results.counts) as JSON. The summary of ``ingest run`` and of a shard run
-- adds up the rows of the runs it launched (ingest_assets.engine.summary).
CREATE TABLE step_results (
    run_id    VARCHAR NOT NULL,
    step      VARCHAR NOT NULL,   -- the asset: sources, documents, parent_chunks, child_chunks, ...
    plan_key  VARCHAR,            -- NULL for sources and documents
    shard     VARCHAR NOT NULL,
    counts    JSON NOT NULL,
    "at"      TIMESTAMP NOT NULL
);

-- ---------------------------------------------------------------- read side (contract)

-- Each file's newest record.
CREATE VIEW sources AS
SELECT uri, path, document_id, shard, content_hash, size, mtime_ns, ctime_ns, inode, hashed_at_ns,
       deleted, parse_key, version_id, updated_at
FROM source_rows
QUALIFY row_number() OVER (PARTITION BY uri ORDER BY seq DESC) = 1;

-- Each plan's newest work pointer per document and role.
CREATE VIEW plan_members AS
SELECT plan_key, document_id, role, set_key, version_id, based_on, updated_at
FROM member_rows
QUALIFY row_number() OVER (PARTITION BY plan_key, document_id, role ORDER BY seq DESC) = 1;

CREATE VIEW current_documents AS
SELECT d.document_id, d.version_id, d.source_uri, d.kind, d.title, s.path, s.shard,
       s.content_hash, s.size AS bytes, d.text_length, d.parsed_at
FROM sources s
JOIN documents d ON d.document_id = s.document_id AND d.version_id = s.version_id
WHERE NOT s.deleted;

-- Each plan key's state: the newest plan_states row of each registered key.
CREATE VIEW plan_status AS
SELECT p.plan_key, p.name, p.fingerprint, p.settings, p.registered_at, s.state, s."at" AS state_at
FROM plans p
JOIN (SELECT plan_key, state, "at" FROM plan_states
      QUALIFY row_number() OVER (PARTITION BY plan_key ORDER BY seq DESC, "at" DESC) = 1) s
  ON s.plan_key = p.plan_key;

-- What each plan has built for the current version of each current document (building and
-- live keys), with children only over the parents they were cut from, graphs only over those
-- children: what the steps and the checks work on, not what readers are served.
CREATE VIEW staged_members AS
WITH staged AS (
    SELECT m.*
    FROM plan_members m
    JOIN plan_status p ON p.plan_key = m.plan_key AND p.state <> 'retired'
    JOIN current_documents d ON d.document_id = m.document_id AND d.version_id = m.version_id
),
parents AS (SELECT * FROM staged WHERE role = 'parent'),
children AS (
    SELECT c.* FROM staged c
    JOIN parents p ON p.plan_key = c.plan_key AND p.document_id = c.document_id AND c.based_on = p.set_key
    WHERE c.role = 'child'
),
graphs AS (
    SELECT g.* FROM staged g
    JOIN children c ON c.plan_key = g.plan_key AND c.document_id = g.document_id AND g.based_on = c.set_key
    WHERE g.role = 'graph'
)
SELECT * FROM parents UNION ALL SELECT * FROM children UNION ALL SELECT * FROM graphs;

-- The newest promotion of each (plan, document) whose source is not deleted, with the plan's
-- state: what each plan key serves (a deleted file leaves at once).
CREATE VIEW promoted AS
SELECT r.plan_key, r.document_id, r.version_id, r.parent_set, r.child_set, r.graph_set, r.embedding,
       r."at", p.state
FROM (SELECT * FROM promotions
      QUALIFY row_number() OVER (PARTITION BY plan_key, document_id ORDER BY seq DESC, "at" DESC) = 1) r
JOIN plan_status p ON p.plan_key = r.plan_key
WHERE EXISTS (SELECT 1 FROM sources s WHERE s.document_id = r.document_id AND NOT s.deleted);

-- The sets the live plans serve, one row per (plan, document, role), as plan_members has them.
CREATE VIEW current_members AS
SELECT plan_key, document_id, 'parent' AS role, parent_set AS set_key, version_id, '' AS based_on
FROM promoted WHERE state = 'live'
UNION ALL
SELECT plan_key, document_id, 'child', child_set, version_id, parent_set FROM promoted WHERE state = 'live'
UNION ALL
SELECT plan_key, document_id, 'graph', graph_set, version_id, child_set FROM promoted WHERE state = 'live';

-- The document versions each live plan serves (current_documents has each file's newest parsed
-- version, which a plan serves once it has all of that version's chunks).
CREATE VIEW served_documents AS
SELECT r.plan_key, r.document_id, r.version_id, d.source_uri, d.kind, d.title, s.path, s.shard, r."at" AS promoted_at
FROM promoted r
JOIN documents d ON d.document_id = r.document_id AND d.version_id = r.version_id
JOIN sources s ON s.document_id = r.document_id
WHERE r.state = 'live';

CREATE VIEW current_chunks AS
SELECT m.plan_key, c.id, c.document_id, c.version_id, c.level, c."index", c.text, c.chunker,
       c.chunker_hash, c.parent_id, c.provenance, c.heading_path, c.content_kind,
       c.token_count, c.metadata
FROM current_members m
JOIN chunks c ON c.set_key = m.set_key
WHERE m.role IN ('parent', 'child');

-- A chunk node's stored properties leave out the text, which the chunks table holds already:
-- the view joins it back, so each node shows Chunk.to_node_record() in full. The chunks of a
-- graph set are those of its parent set and its child set: two equality joins (a join on
-- `set_key IN (parent, child)` runs as a nested loop, seconds on a corpus).
CREATE VIEW graph_nodes AS
WITH graph_chunks AS (
    SELECT g.set_key AS graph_key, c.id, c.text
    FROM graph_sets g JOIN chunks c ON c.set_key = g.parent_set_key
    UNION ALL
    SELECT g.set_key, c.id, c.text
    FROM graph_sets g JOIN chunks c ON c.set_key = g.child_set_key
)
SELECT m.plan_key, n.id, n.label,
       CASE WHEN c.text IS NULL THEN n.properties
            ELSE json_merge_patch(n.properties, json_object('text', c.text)) END AS properties
FROM current_members m
JOIN graph_node_rows n ON n.set_key = m.set_key
LEFT JOIN graph_chunks c ON c.graph_key = m.set_key AND c.id = n.id
WHERE m.role = 'graph';

CREATE VIEW graph_edges AS
SELECT m.plan_key, e.source_id, e.target_id, e.type, e.properties
FROM current_members m
JOIN graph_edge_rows e ON e.set_key = m.set_key
WHERE m.role = 'graph';

-- The current children of each plan that embeds, with their vector under the plan's model, once.
CREATE VIEW chunk_vectors AS
SELECT m.plan_key, c.id, c.document_id, c.version_id, c.parent_id, c."index", c.text, c.heading_path,
       c.content_kind, c.token_count, d.uri AS source_uri, e.model, e.text_mode, e.dimension, t.text_hash,
       v.vector
FROM current_members m
JOIN plan_embeddings e ON e.plan_key = m.plan_key
JOIN sources d ON d.document_id = m.document_id
JOIN chunks c ON c.set_key = m.set_key
JOIN chunk_texts t ON t.set_key = m.set_key AND t.text_mode = e.text_mode AND t.chunk_id = c.id
JOIN vectors v ON v.text_hash = t.text_hash AND v.model = e.model
WHERE m.role = 'child'
-- Writers of two shards may store one text's vector at once (the same vector): serve one.
QUALIFY row_number() OVER (PARTITION BY m.plan_key, m.set_key, c.id ORDER BY v.created_at) = 1;

-- Failures of the current content of current sources: fixing or deleting the file clears them,
-- and a parse failure is cleared by a parse of the same content that succeeds (a newer parser).
CREATE VIEW ingest_failures AS
SELECT f.source_uri, f.stage, f.plan_key, f.error, f."at"
FROM failure_log f
JOIN sources s ON s.uri = f.source_uri AND s.content_hash = f.content_hash
WHERE NOT s.deleted AND NOT (f.stage = 'parse' AND s.version_id IS NOT NULL);
