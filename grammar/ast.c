/*
** ast.c - constructors for the syntax tree (see ast.h).
*/
#include "ast.h"

AstNode *astNew(TqArena *a, AstKind kind, TqLoc loc) {
  AstNode *n = tqArenaAlloc(a, sizeof *n);
  n->kind = kind;
  n->loc = loc;
  return n;
}

AstNode *astAppend(AstNode *list, AstNode *item) {
  if (!list) return item;
  /* the head remembers its last node; a list given whole (item->next) or
  ** changed behind the head's back is walked from there */
  AstNode *p = list->tail ? list->tail : list;
  while (p->next) p = p->next;
  p->next = item;
  while (p->next) p = p->next;
  list->tail = p;
  return list;
}

void astAppendTail(AstNode **head, AstNode **tail, AstNode *item) {
  if (!item) return;
  if (*tail) (*tail)->next = item;
  else *head = item;
  for (*tail = item; (*tail)->next;) *tail = (*tail)->next;
}

int astLen(const AstNode *list) {
  int n = 0;
  for (; list; list = list->next) n++;
  return n;
}

