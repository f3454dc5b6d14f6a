"""Every knob of graphsvc, read from environment variables in one place.

The code imports the settings from here, not from the modules of the package, so they can
be arranged without touching what reads them: ``sections`` declares every setting, ``names``
finds a setting's section by its plain name. The reference the docs' tables are rendered
from is imported from ``graphsvc.settings.reference`` itself, which no serving process needs.
"""

from graphsvc.settings.sections import (
    PROJECT_ROOT,
    SECRET_SETTINGS,
    SECTION_OF,
    SECTIONS,
    AccessSettings,
    ApiSettings,
    BoundSettings,
    ChangeSettings,
    ColdStartSettings,
    DevelopmentSecrets,
    EventSettings,
    InteractionSettings,
    ListSettings,
    LocalServerSettings,
    MirrorSettings,
    Neo4jSettings,
    NotificationSettings,
    PageSettings,
    RedisSettings,
    Settings,
    SuggestionSettings,
    TimelineSettings,
    WorkerSettings,
    WriteSettings,
    development_secrets,
    get_local_server_settings,
    get_settings,
    refuse_development_secrets,
)

__all__ = [
    "PROJECT_ROOT",
    "SECRET_SETTINGS",
    "SECTIONS",
    "SECTION_OF",
    "AccessSettings",
    "ApiSettings",
    "BoundSettings",
    "ChangeSettings",
    "ColdStartSettings",
    "DevelopmentSecrets",
    "EventSettings",
    "InteractionSettings",
    "ListSettings",
    "LocalServerSettings",
    "MirrorSettings",
    "Neo4jSettings",
    "NotificationSettings",
    "PageSettings",
    "RedisSettings",
    "Settings",
    "SuggestionSettings",
    "TimelineSettings",
    "WorkerSettings",
    "WriteSettings",
    "development_secrets",
    "get_local_server_settings",
    "get_settings",
    "refuse_development_secrets",
]
