"""The OpenAI media surfaces (completions, embeddings, images, audio, rerank): request
validation, multipart forms and uploads. Pure: bytes and dicts in, values out."""
