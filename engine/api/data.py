"""What a dataset format is built from (`DatasetFormat`, `@dataset_format_class`, the row shapes) and the
readers' helpers: column-name presets, located rows of JSON and JSONL files, Inspect logs, battles, and
people's labels files.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.analyze.people_labels import read_labels
from engine.datasets.battles import winner_side
from engine.datasets.column_names import (
    CATEGORY_NAMES,
    ID_NAMES,
    LABEL_NAMES,
    MODEL_NAMES,
    PROMPT_NAMES,
    by_frequency,
    columns_of,
    json_object_with,
    named,
)
from engine.datasets.conversations import content_text
from engine.datasets.files import json_document, located_rows
from engine.datasets.inspect_logs import LOG_SUFFIXES, holds_logs, log_files, log_model, log_rows
from engine.datasets.rows import field_value, text_value
from engine.datasets.sessions import Session, SessionRows, inner, log_format, session_formats
from engine.datasets.shapes import AnswerRows, BattleRows, ConversationRows, TableRecords, WideRows
from engine.datasets.trace_messages import CallFacts, chat_messages, conversation, count, moment
from engine.formats import DatasetFormat, Located, Sniffed, dataset_format, dataset_format_class

__all__ = [
    "CATEGORY_NAMES",
    "ID_NAMES",
    "LABEL_NAMES",
    "LOG_SUFFIXES",
    "MODEL_NAMES",
    "PROMPT_NAMES",
    "AnswerRows",
    "BattleRows",
    "CallFacts",
    "ConversationRows",
    "DatasetFormat",
    "Located",
    "Session",
    "SessionRows",
    "Sniffed",
    "TableRecords",
    "WideRows",
    "by_frequency",
    "chat_messages",
    "columns_of",
    "content_text",
    "conversation",
    "count",
    "dataset_format",
    "dataset_format_class",
    "field_value",
    "holds_logs",
    "inner",
    "json_document",
    "json_object_with",
    "located_rows",
    "log_files",
    "log_format",
    "log_model",
    "log_rows",
    "moment",
    "named",
    "read_labels",
    "session_formats",
    "text_value",
    "winner_side",
]
