"""The store's plan methods: registering plan keys, promoting documents, switching keys live.

No Dagster here. :class:`PlanServing` is a part of :class:`~ingest_assets.store.IngestStore`
(its base), kept apart so each module holds one job; the SQL is in :mod:`.serving`. A promotion
is a row of its document (one transaction over the documents' shards); registering plans and
switching a key live change what every shard serves (one transaction over the whole store,
taken only when a read says something may change).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from uuid import UUID

from ingest_assets.store import serving
from ingest_assets.store.connection import retried
from ingest_assets.store.rows import utc_now
from ingest_assets.store.serving import PlanRegistration, PlanState
from ingest_assets.store.shards import shards_of

__all__ = ["PlanServing"]


class PlanServing:
    """Plan registration and promotion, over the connections and reads of the store it is a
    base of (``connect``, ``transaction``, ``query``, ``current_documents``, ``run_id``)."""

    run_id: str

    def sync_plans(self, plans: Sequence[PlanRegistration]) -> list[str]:
        """Bring the stored plan states in line with the plans file's ``plans``; returns the keys
        newly registered or brought back (see :func:`.serving.register_plans`). A transaction
        over the whole store, taken only when something may change (asked first by a read)."""
        with self.connect() as con:
            if not serving.registration_due(con, plans):
                return []
        return self._register_plans(plans)

    @retried
    def _register_plans(self, plans: Sequence[PlanRegistration]) -> list[str]:
        with self.transaction() as con:
            return serving.register_plans(con, self.run_id, plans, utc_now())

    def plan_states(self) -> dict[str, PlanState]:
        """Every stored plan key's state (``building``, ``live`` or ``retired``)."""
        with self.connect() as con:
            return serving.state_rows(con)

    def is_live(self, plan_key: str) -> bool:
        """Whether readers are served ``plan_key`` now (its state is ``live``)."""
        state = self.plan_states().get(plan_key)
        return state is not None and state.state == serving.LIVE

    def live_plans(self) -> list[str]:
        """Return the keys of live plans, sorted."""
        return sorted(key for key, s in self.plan_states().items() if s.state == serving.LIVE)

    def publish(
        self,
        plan_key: str,
        kinds: Iterable[str] | None,
        embedding: str | None,
        document_ids: Iterable[Any] | None = None,
        *,
        shards: Iterable[str] | None = None,
    ) -> int:
        """Promote what ``plan_key`` has all of, of ``document_ids`` (a batch of a step), or of
        the current documents of ``shards`` (the end of a step), or of every document; then,
        unless a batch was given, switch the key live if it is building and now covers every
        document it routes (``kinds``; None: every kind). Returns the promotions inserted.

        Promotions are rows of their documents: one transaction over their shards. A switch
        changes what every shard serves: one transaction over the whole store, taken only
        while the key is building.
        """
        if document_ids is None and shards is None:
            return self._publish_all(plan_key, kinds, embedding)
        if document_ids is None:
            document_ids = [d.document_id for d in self.current_documents(shards)]
        made = self._promote(plan_key, embedding, list(document_ids))
        if shards is not None:
            state = self.plan_states().get(plan_key)
            if state is not None and state.state == serving.BUILDING:
                self._switch(plan_key, kinds)
        return made

    @retried
    def _promote(self, plan_key: str, embedding: str | None, document_ids: list[Any]) -> int:
        if not document_ids:
            return 0
        with self.transaction(shards_of(document_ids)) as con:
            return serving.promote(con, self.run_id, plan_key, embedding, document_ids, utc_now())

    @retried
    def _switch(self, plan_key: str, kinds: Iterable[str] | None) -> None:
        with self.transaction() as con:
            serving.switch_if_covered(con, self.run_id, plan_key, kinds, utc_now())

    @retried
    def _publish_all(self, plan_key: str, kinds: Iterable[str] | None, embedding: str | None) -> int:
        now = utc_now()
        with self.transaction() as con:
            made = serving.promote(con, self.run_id, plan_key, embedding, None, now)
            serving.switch_if_covered(con, self.run_id, plan_key, kinds, now)
        return made

    def promoted(self, plan_key: str) -> dict[UUID, tuple[UUID, str, str, str, str | None]]:
        """What ``plan_key`` serves of each document: (version, parent, child and graph set,
        embedding)."""
        rows = self.query(
            "SELECT document_id, version_id, parent_set, child_set, graph_set, embedding FROM promoted "
            "WHERE plan_key = ?",
            [plan_key],
        )
        return {doc: tuple(rest) for doc, *rest in rows}  # type: ignore[misc]

    def plan_progress(self, plan_key: str, kinds: Iterable[str] | None) -> tuple[str | None, int, int]:
        """``plan_key``'s state (None: not registered), and how many of the current documents
        it routes it has ready (served at their current version, or failed under it) of all."""
        with self.connect() as con:
            return serving.progress(con, plan_key, kinds)
