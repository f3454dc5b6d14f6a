// Ranker models: the registry of trained suggestion rankers (:RankerModel {name, version, body,
// metrics, status, outcome, why}) and the pointer beside them (:RankerServing {name}) that says
// which version is served, which one is the challenger of an A/B split and for what share of
// users, and how the last training attempt ended. The worker's training writes a model and
// moves the pointer in one transaction (ranker_models/save), so a training that dies before it
// leaves the served model as it was.
// A model a training promotes first goes on trial (the pointer's trial_at and trial_base): it
// is the challenger for $trial of the users until the worker ends the trial (end_trial).
// Statuses: served (the pointer's served), challenger (the pointer's challenger), retired (was
// served, or a challenger, and is no longer), rejected (its training did not promote it, or it
// was rolled back on its trial).

// name: serving
// What an API process serves: the served version and the challenger with its share (0: none),
// each with when it was stored (a version number starts again from 1 in a registry made
// anew, after a wipe: the pair names one model), read every RANKER_REFRESH_SECONDS; the
// bodies are read only when one of them changed.
// Locking: none (a read).
// Params: $name.
// Returns one row: served, challenger, share, served_created, challenger_created (µs; 0: none).
OPTIONAL MATCH (p:RankerServing {name: $name})
OPTIONAL MATCH (s:RankerModel {name: $name, version: p.served})
OPTIONAL MATCH (c:RankerModel {name: $name, version: p.challenger})
RETURN coalesce(p.served, 0) AS served, coalesce(p.challenger, 0) AS challenger,
       coalesce(p.share, 0.0) AS share, coalesce(s.created, 0) AS served_created,
       coalesce(c.created, 0) AS challenger_created

// name: bodies
// The stored models of $versions (the JSON the ranker is built from).
// Locking: none (a read).
// Params: $name, $versions.
// Returns: version, body; no row for a version not stored.
UNWIND $versions AS version
MATCH (m:RankerModel {name: $name, version: version})
RETURN m.version AS version, m.body AS body

// name: state
// The pointer and the served model, for the worker's training triggers and `graphsvc ranker
// status`: when the served model was promoted and on how many follow edges it was trained,
// and the last training attempt (when, outcome, why, on how many edges).
// Locking: none (a read).
// Params: $name.
// Returns one row: served, challenger, share, promoted_at (µs), body, metrics (JSON text, null
//         without a served model), attempt_at (µs), attempt_outcome, attempt_why,
//         attempt_version, attempt_edges (null before the first attempt), served_why (why the
//         served model is served), trial_at (µs; null: no trial runs), trial_base (JSON text:
//         the served model's online counts when the trial began).
OPTIONAL MATCH (p:RankerServing {name: $name})
OPTIONAL MATCH (m:RankerModel {name: $name, version: p.served})
RETURN coalesce(p.served, 0) AS served, coalesce(p.challenger, 0) AS challenger,
       coalesce(p.share, 0.0) AS share, p.promoted_at AS promoted_at, m.body AS body,
       m.metrics AS metrics, p.attempt_at AS attempt_at, p.attempt_outcome AS attempt_outcome,
       p.attempt_why AS attempt_why, p.attempt_version AS attempt_version,
       p.attempt_edges AS attempt_edges, m.why AS served_why, p.trial_at AS trial_at,
       p.trial_base AS trial_base

// name: save
// Store a trained model as the next version, and promote it when $promote and the served model
// is still $expected (the one it was validated against): with $trial 0 the old served model
// is retired and the pointer moves; else the model goes on trial, the challenger for $trial of
// the users (a challenger there was goes back as a split's does), the served model's online
// counts noted as $trial_base; in this one transaction. A model not promoted is stored as
// rejected with $why, or with $stale when another model was promoted while it trained. The
// attempt is noted on the pointer either way.
// Locking: the pointer (written before it is read: two trainings saving at once are serialised,
// and the second sees the first's version and promotion); the models it creates and retires.
// Params: $name, $body (JSON text), $metrics (JSON text), $created (µs), $edges (follow edges
//         when trained), $promote, $expected (0: none served), $why, $stale, $trial (a share;
//         0: no trial), $trial_base (JSON text).
// Returns one row: version, promoted (served now, or on trial).
MERGE (p:RankerServing {name: $name})
SET p.locked = true
WITH p
OPTIONAL MATCH (old:RankerModel {name: $name})
WITH p, coalesce(max(old.version), 0) + 1 AS version,
     $promote AND coalesce(p.served, 0) = $expected AS promoted
REMOVE p.locked
CREATE (m:RankerModel {name: $name, version: version, created: $created, body: $body,
                       metrics: $metrics, edges: $edges,
                       status: CASE WHEN NOT promoted THEN 'rejected'
                                    WHEN $trial > 0 THEN 'challenger' ELSE 'served' END,
                       outcome: CASE WHEN NOT promoted THEN 'rejected'
                                     WHEN $trial > 0 THEN 'on trial' ELSE 'promoted' END,
                       why: CASE WHEN promoted OR NOT $promote THEN $why ELSE $stale END})
WITH p, m, promoted
CALL (p, m, promoted) {
  WITH p, m
  WHERE promoted AND $trial = 0
  OPTIONAL MATCH (previous:RankerModel {name: $name, version: p.served})
  FOREACH (_ IN CASE WHEN previous IS NULL THEN [] ELSE [1] END |
    SET previous.status = 'retired')
  SET p.served = m.version, p.promoted_at = $created, m.served_at = $created
}
CALL (p, m, promoted) {
  WITH p, m
  WHERE promoted AND $trial > 0
  OPTIONAL MATCH (old:RankerModel {name: $name, version: p.challenger})
  FOREACH (_ IN CASE WHEN old IS NULL THEN [] ELSE [1] END |
    SET old.status = CASE WHEN old.served_at IS NULL AND old.outcome IN ['rejected', 'on trial']
                          THEN 'rejected' ELSE 'retired' END)
  SET p.challenger = m.version, p.share = $trial, p.trial_at = $created,
      p.trial_base = $trial_base
}
SET p.attempt_at = $created, p.attempt_outcome = m.outcome, p.attempt_why = m.why,
    p.attempt_version = m.version, p.attempt_edges = $edges
RETURN m.version AS version, promoted

// name: fail
// Note a training attempt that failed before it stored anything (the served model is left
// as it is).
// Locking: the pointer.
// Params: $name, $at (µs), $why (the error, one line), $edges.
// Returns nothing.
MERGE (p:RankerServing {name: $name})
SET p.attempt_at = $at, p.attempt_outcome = 'failed', p.attempt_why = $why,
    p.attempt_version = null, p.attempt_edges = $edges

// name: promote
// An operator serves version $version (a rollback, or a model the training rejected), or the
// worker a model that passed its trial: the served model is retired, and a challenger that
// becomes the served model ends its split (and its trial).
// Rules: the version must be stored ('unknown_version').
// Locking: the pointer and the two models.
// Params: $name, $version, $at (µs), $why.
// Returns one row: refused (null or the rule), previous (the version served before; 0: none).
OPTIONAL MATCH (m:RankerModel {name: $name, version: $version})
OPTIONAL CALL (m) {
  WITH m
  WHERE m IS NOT NULL
  MERGE (p:RankerServing {name: $name})
  SET p.locked = true
  WITH p, m, coalesce(p.served, 0) AS previous
  REMOVE p.locked
  WITH p, m, previous
  OPTIONAL MATCH (old:RankerModel {name: $name, version: previous})
  FOREACH (_ IN CASE WHEN old IS NULL OR old = m THEN [] ELSE [1] END |
    SET old.status = 'retired')
  FOREACH (_ IN CASE WHEN p.challenger = m.version THEN [1] ELSE [] END |
    REMOVE p.challenger, p.share, p.trial_at, p.trial_base)
  SET p.served = m.version, p.promoted_at = $at, m.status = 'served', m.served_at = $at,
      m.why = $why
  RETURN previous
}
RETURN CASE WHEN m IS NULL THEN 'unknown_version' END AS refused, coalesce(previous, 0) AS previous

// name: split
// Start (or change) an A/B split: users in $share of a stable hash of their id are ranked by
// version $version, the rest by the served model. A challenger it replaces goes back to
// retired (or rejected, when it was never served: rejected by its training, or ended on its
// trial); an operator's split ends a trial.
// Rules: the version must be stored ('unknown_version') and not be the served one ('served').
// Locking: the pointer and the models whose status it changes.
// Params: $name, $version, $share.
// Returns one row: refused (null or the rule).
OPTIONAL MATCH (m:RankerModel {name: $name, version: $version})
OPTIONAL MATCH (current:RankerServing {name: $name})
WITH m, CASE WHEN m IS NULL THEN 'unknown_version'
             WHEN current.served = $version THEN 'served' END AS refused
CALL (m, refused) {
  WITH m
  WHERE refused IS NULL
  MERGE (p:RankerServing {name: $name})
  SET p.locked = true
  REMOVE p.locked
  WITH p, m
  OPTIONAL MATCH (old:RankerModel {name: $name, version: p.challenger})
  FOREACH (_ IN CASE WHEN old IS NULL OR old = m THEN [] ELSE [1] END |
    SET old.status = CASE WHEN old.served_at IS NULL AND old.outcome IN ['rejected', 'on trial']
                          THEN 'rejected' ELSE 'retired' END)
  SET p.challenger = m.version, p.share = $share, m.status = 'challenger'
  REMOVE p.trial_at, p.trial_base
}
RETURN refused

// name: split_off
// End the A/B split (or a trial): every user is ranked by the served model again; the
// challenger goes back to retired (or rejected, when it was never served: rejected by its
// training, or ended on its trial).
// Locking: the pointer and the challenger.
// Params: $name.
// Returns one row: challenger (the version that was; 0: none).
OPTIONAL MATCH (p:RankerServing {name: $name})
OPTIONAL MATCH (old:RankerModel {name: $name, version: p.challenger})
FOREACH (_ IN CASE WHEN old IS NULL THEN [] ELSE [1] END |
  SET old.status = CASE WHEN old.served_at IS NULL AND old.outcome IN ['rejected', 'on trial']
                        THEN 'rejected' ELSE 'retired' END)
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END |
  REMOVE p.challenger, p.share, p.trial_at, p.trial_base)
RETURN coalesce(old.version, 0) AS challenger

// name: end_trial
// End the trial that began at $trial_at of version $version: with $promote it is served to
// every user (the served model retired), else it is rolled back (rejected, the served model
// ranks every user again, and the attempt's outcome says so: the next training waits its
// turn, as after a rejection). Either way the model's why becomes $why, then its training's.
// Nothing happens when that trial no longer runs (an operator ended or replaced it, or
// another worker ended it, meanwhile).
// Locking: the pointer and the two models.
// Params: $name, $version, $trial_at (µs), $promote, $at (µs), $why.
// Returns one row: ended (whether this call ended it).
OPTIONAL MATCH (p:RankerServing {name: $name})
WHERE p.challenger = $version AND p.trial_at = $trial_at
OPTIONAL MATCH (m:RankerModel {name: $name, version: $version})
WITH p, m, p IS NOT NULL AND m IS NOT NULL AS ended
CALL (p, m, ended) {
  WITH p, m
  WHERE ended AND $promote
  OPTIONAL MATCH (old:RankerModel {name: $name, version: p.served})
  FOREACH (_ IN CASE WHEN old IS NULL THEN [] ELSE [1] END | SET old.status = 'retired')
  SET p.served = m.version, p.promoted_at = $at, m.status = 'served', m.served_at = $at
}
CALL (p, m, ended) {
  WITH p, m
  WHERE ended
  WITH p, m, CASE WHEN $promote THEN 'promoted' ELSE 'rolled back' END AS outcome
  SET m.outcome = outcome, m.why = $why + '; its training: ' + coalesce(m.why, '?'),
      m.status = CASE WHEN $promote THEN 'served' ELSE 'rejected' END,
      p.attempt_outcome = outcome, p.attempt_why = $why
  REMOVE p.challenger, p.share, p.trial_at, p.trial_base
}
RETURN ended

// name: recent
// The newest $limit models, for `graphsvc ranker status`.
// Locking: none (a read).
// Params: $name, $limit.
// Returns: version, created (µs), status, why, edges, metrics (JSON text); newest first.
MATCH (m:RankerModel {name: $name})
RETURN m.version AS version, m.created AS created, coalesce(m.status, 'retired') AS status,
       coalesce(m.why, '') AS why, m.edges AS edges, m.metrics AS metrics
ORDER BY version DESC
LIMIT $limit

// name: metrics
// What the stored versions $versions measured offline when trained (precision@10 on validation
// users, ...), shown beside their online figures by `graphsvc ranker report`. The versions are
// those counted online: a handful.
// Locking: none (a read).
// Params: $name, $versions.
// Returns: version, metrics (JSON text); one row per stored version asked for.
MATCH (m:RankerModel {name: $name})
WHERE m.version IN $versions
RETURN m.version AS version, m.metrics AS metrics
ORDER BY version
