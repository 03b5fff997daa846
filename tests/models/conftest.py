"""Model-layer tests never reach a real provider: any real request fails loudly.

(The same guard belongs in tests/conftest.py so it covers the whole suite; the llama tier lifts it
with ``pydantic_ai.models.override_allow_model_requests(True)``.)"""

import pydantic_ai.models

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
