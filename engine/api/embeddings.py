"""Sentence embeddings (MiniLM) and BERTScore's token encoder, shared by every judge kind and method that
embeds text: one model load per process, cached per text in the run's derived store.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.embeddings import MODEL_NAME, Encoded, TokenEncoder, default_encoder, embed, one_thread, token_encoder

__all__ = [
    "MODEL_NAME",
    "Encoded",
    "TokenEncoder",
    "default_encoder",
    "embed",
    "one_thread",
    "token_encoder",
]
