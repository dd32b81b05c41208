/* placeholder: the degraded-kernel helper is being written */
int main(void)
{
	return 1;
}
