/*
** tqmon.h - public engine API of libtqmon (placeholder until the engine API
** issue; the command-line tool is built on runtime/runtime.h for now).
*/
#ifndef TQMON_H
#define TQMON_H
#endif
