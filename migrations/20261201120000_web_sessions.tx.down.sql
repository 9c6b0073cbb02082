DROP TABLE IF EXISTS web_sessions;
