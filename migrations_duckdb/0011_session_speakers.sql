-- The named speakers of a session (each message's meta "speaker" or "name": a chat between
-- named people; a name holds more than tabs, newlines and spaces), sorted and distinct;
-- NULL when no message names one (a coding session's
-- user and assistant). Search reads them to tell the people its entries are about from
-- the things (axiom.retrieval.dense_query). Owned by axiom.ingest.session_projector; the
-- sessions stored before are filled from their messages as the projector fills them.
ALTER TABLE sessions ADD COLUMN speakers VARCHAR[];
UPDATE sessions SET speakers = named.speakers
FROM (
  SELECT session_id, list_sort(list_distinct(list(speaker))) AS speakers
  FROM (
    SELECT session_id, CASE
        WHEN json_type(meta_json, '$.speaker') = 'VARCHAR'
          AND regexp_matches(json_extract_string(meta_json, '$.speaker'), '[^\t\n\f\r ]')
          THEN json_extract_string(meta_json, '$.speaker')
        WHEN json_type(meta_json, '$.name') = 'VARCHAR'
          THEN json_extract_string(meta_json, '$.name')
      END AS speaker
    FROM messages
  )
  WHERE speaker IS NOT NULL AND regexp_matches(speaker, '[^\t\n\f\r ]')
  GROUP BY session_id
) AS named
WHERE sessions.session_id = named.session_id;
