"""The OpenAPI document at `/schema` (`/schema/openapi.json`, `/schema/openapi.yaml`)."""

from __future__ import annotations

from typing import Any

from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Components, Schema, SecurityScheme


class StrictStructs(StructSchemaPlugin):
    """Declare `additionalProperties: false` for request Structs that refuse unknown fields
    (litestar's own plugin leaves it out, so the document would promise what we refuse)."""

    def to_openapi_schema(self, field_definition: Any, schema_creator: Any) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        config = getattr(field_definition.annotation, "__struct_config__", None)
        if config is not None and config.forbid_unknown_fields:
            schema.additional_properties = False
        return schema


def openapi_config() -> OpenAPIConfig:
    """Return the document's settings: title, description and the bearer security scheme
    (each route that needs an account names it: `common.BEARER`)."""
    return OpenAPIConfig(
        title="Spades ladder gateway",
        version="1.0.0",
        description=(
            "Accounts, queues, practice tables, ladders, game summaries and replays. "
            "Play happens over the WebSocket at /ws (see PROTOCOL.md). Every error is "
            '{"code": ..., "message": ...}.'
        ),
        path="/schema",
        render_plugins=[JsonRenderPlugin(), YamlRenderPlugin()],
        components=Components(
            security_schemes={
                "BearerToken": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    bearer_format="JWT",
                    description="the access_token of POST /api/tokens",
                )
            }
        ),
    )


__all__ = ["StrictStructs", "openapi_config"]
