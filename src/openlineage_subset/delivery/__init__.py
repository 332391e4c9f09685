"""The delivery room: getting events out, at least once, whatever the endpoint does.

- ``_emitter``: the queue a capture submits to; validates, keeps in the outbox, delivers;
- ``_outbox``: the durable local outbox (segments in lanes, a cursor per lane);
- ``_trust``: an outbox another user could have written is refused, as ssh refuses keys;
- ``_sending``: transports (openlineage-python's, or a JSON Lines file), retries, quarantine;
- ``_replay``: ``ol-subset replay OUTBOX``, what an outbox still holds, sent;
- ``_openlineage_client``: the bridge to openlineage-python (its configuration and Serde).

Arrows point down: ``spark`` and ``cli`` use this room; it uses the producer room and the SDK.
"""
